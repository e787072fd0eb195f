package com.example.myapplication

import android.content.Intent

/** What one overlay shows and does; read from the broadcast's extras. */
data class OverlaySpec(
    val title: String,
    val content: String,
    val confirm: String,
    val cancel: String,
    val webUrl: String,
    val servedUrl: String,
    val urgent: Boolean,
    val style: String,
    val brand: String,
    val consent: String,
    val packageName: String,
) {
    /** The page confirm opens: the loopback server's copy when the host gave one. */
    val openUrl: String get() = servedUrl.ifEmpty { webUrl }

    companion object {
        const val DEFAULT_PACKAGE = "com.example.myapplication"
        private val STYLES = setOf("dialog", "bottom_sheet", "fullscreen")

        /**
         * The upstream harness's extras (title, content, cancel, confirm, weburl, isUrgent),
         * plus ours: style, brand, consent, package and served_url.
         */
        fun from(intent: Intent): OverlaySpec {
            fun text(key: String, default: String = "") = intent.getStringExtra(key) ?: default
            val style = text("style", "dialog").let { if (it in STYLES) it else "dialog" }
            return OverlaySpec(
                title = text("title", "System notice"),
                content = text("content"),
                confirm = text("confirm", "OK"),
                cancel = text("cancel", "Cancel"),
                webUrl = text("weburl"),
                servedUrl = text("served_url"),
                // Upstream sends --ez isUrgent true; a string "true" is accepted as well.
                urgent = intent.getBooleanExtra("isUrgent", false) ||
                    text("isUrgent").equals("true", ignoreCase = true),
                style = style,
                brand = text("brand", "System UI"),
                consent = text("consent"),
                packageName = text("package", DEFAULT_PACKAGE).ifEmpty { DEFAULT_PACKAGE },
            )
        }
    }
}
