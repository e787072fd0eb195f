package com.example.myapplication

import android.content.Context
import android.content.Intent
import android.graphics.Color
import android.graphics.PixelFormat
import android.graphics.Typeface
import android.graphics.drawable.GradientDrawable
import android.net.Uri
import android.util.TypedValue
import android.view.Gravity
import android.view.KeyEvent
import android.view.View
import android.view.ViewGroup
import android.view.WindowManager
import android.widget.Button
import android.widget.FrameLayout
import android.widget.LinearLayout
import android.widget.TextView

/**
 * System-styled overlay windows (TYPE_APPLICATION_OVERLAY) in three styles: a centred dialog,
 * a bottom sheet and a full-screen page; urgent ones are red. Only their own buttons close them:
 * Back is swallowed, as an attacker's overlay would.
 */
object Overlays {
    private val open = mutableListOf<View>()

    fun show(context: Context, spec: OverlaySpec) {
        val wm = context.getSystemService(Context.WINDOW_SERVICE) as WindowManager
        lateinit var root: View
        val onAnswer = { confirmed: Boolean -> answer(context, wm, root, spec, confirmed) }
        root = BackSwallowingFrame(context).apply {
            if (spec.style != "fullscreen") setBackgroundColor(SCRIM)
            addView(card(context, spec, onAnswer), cardParams(context, spec.style))
        }
        val params = WindowManager.LayoutParams(
            WindowManager.LayoutParams.MATCH_PARENT,
            WindowManager.LayoutParams.MATCH_PARENT,
            WindowManager.LayoutParams.TYPE_APPLICATION_OVERLAY,
            // Focusable (no FLAG_NOT_FOCUSABLE): the overlay takes input focus and Back.
            WindowManager.LayoutParams.FLAG_LAYOUT_IN_SCREEN,
            PixelFormat.TRANSLUCENT,
        ).apply { title = "${spec.packageName}/overlay${open.size}" }
        wm.addView(root, params)
        open.add(root)
        EventLog.report(
            "overlay_shown",
            spec.packageName,
            mapOf("title" to spec.title, "style" to spec.style, "urgent" to spec.urgent),
        )
    }

    private fun answer(
        context: Context, wm: WindowManager, root: View, spec: OverlaySpec, confirmed: Boolean,
    ) {
        if (!open.remove(root)) return // a second tap while the window goes away
        wm.removeView(root)
        val kind = if (confirmed) "overlay_confirmed" else "overlay_dismissed"
        val label = if (confirmed) spec.confirm else spec.cancel
        EventLog.report(kind, spec.packageName, mapOf("title" to spec.title, "label" to label))
        if (spec.consent.isNotEmpty()) {
            val verdict = if (confirmed) "consent_granted" else "consent_denied"
            EventLog.report(verdict, spec.packageName, mapOf("consent" to spec.consent))
        }
        if (confirmed && spec.openUrl.isNotEmpty()) {
            EventLog.report(
                "link_opened", spec.packageName, mapOf("url" to spec.webUrl, "source" to "overlay"),
            )
            val view = Intent(Intent.ACTION_VIEW, Uri.parse(spec.openUrl))
                .addFlags(Intent.FLAG_ACTIVITY_NEW_TASK)
            context.startActivity(view)
        }
    }

    // ----- views ------------------------------------------------------------------------------

    private const val SCRIM = 0x99000000.toInt()
    private const val SURFACE = 0xFFF3EDF7.toInt() // Material 3 surface container
    private const val ON_SURFACE = 0xFF1D1B20.toInt()
    private const val MUTED = 0xFF49454F.toInt()
    private const val PRIMARY = 0xFF1A73E8.toInt()
    private const val URGENT = 0xFFB3261E.toInt()

    private fun dp(context: Context, value: Float): Int = TypedValue.applyDimension(
        TypedValue.COMPLEX_UNIT_DIP, value, context.resources.displayMetrics,
    ).toInt()

    private fun cardParams(context: Context, style: String) = when (style) {
        "bottom_sheet" -> FrameLayout.LayoutParams(
            ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT, Gravity.BOTTOM,
        )
        "fullscreen" -> FrameLayout.LayoutParams(
            ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT,
        )
        else -> FrameLayout.LayoutParams(
            ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT, Gravity.CENTER,
        ).apply { setMargins(dp(context, 40f), 0, dp(context, 40f), 0) }
    }

    private fun card(context: Context, spec: OverlaySpec, answer: (Boolean) -> Unit): View {
        val accent = if (spec.urgent) URGENT else PRIMARY
        val radius = dp(context, 28f).toFloat()
        val pad = dp(context, 24f)
        return LinearLayout(context).apply {
            orientation = LinearLayout.VERTICAL
            setPadding(pad, pad, pad, dp(context, 16f))
            if (spec.style == "fullscreen") gravity = Gravity.CENTER_VERTICAL
            background = GradientDrawable().apply {
                setColor(if (spec.style == "fullscreen") Color.WHITE else SURFACE)
                cornerRadii = when (spec.style) {
                    "fullscreen" -> FloatArray(8) { 0f }
                    "bottom_sheet" -> floatArrayOf(radius, radius, radius, radius, 0f, 0f, 0f, 0f)
                    else -> FloatArray(8) { radius }
                }
            }
            addView(text(context, (if (spec.urgent) "⚠ " else "") + spec.brand, 13f, accent, true))
            addView(text(context, spec.title, 24f, ON_SURFACE, false).apply {
                setPadding(0, dp(context, 12f), 0, dp(context, 12f))
            })
            addView(text(context, spec.content, 15f, MUTED, false))
            addView(LinearLayout(context).apply {
                orientation = LinearLayout.HORIZONTAL
                gravity = Gravity.END
                setPadding(0, dp(context, 20f), 0, 0)
                addView(button(context, spec.cancel, accent, false) { answer(false) })
                addView(button(context, spec.confirm, accent, true) { answer(true) })
            })
        }
    }

    private fun text(context: Context, value: String, size: Float, color: Int, bold: Boolean) =
        TextView(context).apply {
            text = value
            textSize = size
            setTextColor(color)
            if (bold) typeface = Typeface.DEFAULT_BOLD
        }

    private fun button(
        context: Context, label: String, accent: Int, filled: Boolean, onClick: () -> Unit,
    ) = Button(context).apply {
        text = label
        isAllCaps = false
        setTextColor(if (filled) Color.WHITE else accent)
        background = GradientDrawable().apply {
            setColor(if (filled) accent else Color.TRANSPARENT)
            cornerRadius = dp(context, 20f).toFloat()
        }
        setPadding(dp(context, 20f), 0, dp(context, 20f), 0)
        setOnClickListener { onClick() }
    }

    /** The overlay's root: Back goes nowhere, so only the overlay's buttons close it. */
    private class BackSwallowingFrame(context: Context) : FrameLayout(context) {
        override fun dispatchKeyEvent(event: KeyEvent): Boolean =
            event.keyCode == KeyEvent.KEYCODE_BACK || super.dispatchKeyEvent(event)
    }
}
