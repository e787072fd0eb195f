package com.example.myapplication

import android.accessibilityservice.AccessibilityService
import android.graphics.Rect
import android.provider.Settings
import android.view.accessibility.AccessibilityEvent
import android.view.accessibility.AccessibilityNodeInfo

/**
 * What an observer of the screen sees, reported as `GhostEI` logcat lines in the simulator's
 * event vocabulary (ghostei/events.py; keep the keys in step with it):
 *
 * - a click: `tap` with `resource_id`, `target` (the view's text, else its description) and
 *   `x`, `y` (the centre of its bounds); a long click also has `long`;
 * - an editable field taking focus: `field_focused` with `field` (the id's entry name, as the
 *   host names fields from the dump: `com.x:id/card_number` is `card_number`);
 * - text changed in a field: `text_typed` with `field` and `value`; a password field's also
 *   has `password`, and its value only when the secure setting `speak_password` is 1 (setup
 *   sets it): otherwise Android hands accessibility services the dots the field shows.
 *
 * The foreground app is not reported here: the host reads it after every step. Enabled with
 * `ghostei android setup` (the secure setting `enabled_accessibility_services`).
 */
class GhostAccessibilityService : AccessibilityService() {

    override fun onAccessibilityEvent(event: AccessibilityEvent) {
        val packageName = event.packageName?.toString() ?: return
        if (packageName == applicationContext.packageName) return // our own overlays report
        val node = event.source
        when (event.eventType) {
            AccessibilityEvent.TYPE_VIEW_CLICKED -> tap(packageName, node, long = false)
            AccessibilityEvent.TYPE_VIEW_LONG_CLICKED -> tap(packageName, node, long = true)
            AccessibilityEvent.TYPE_VIEW_FOCUSED -> if (node?.isEditable == true) {
                fieldName(node)?.let { EventLog.report("field_focused", packageName, mapOf("field" to it)) }
            }
            AccessibilityEvent.TYPE_VIEW_TEXT_CHANGED -> typed(packageName, node, event)
        }
    }

    private fun tap(packageName: String, node: AccessibilityNodeInfo?, long: Boolean) {
        val data = mutableMapOf<String, Any?>()
        if (node != null) {
            val bounds = Rect()
            node.getBoundsInScreen(bounds)
            data["resource_id"] = node.viewIdResourceName ?: ""
            data["target"] = (node.text ?: node.contentDescription ?: "").toString()
            data["x"] = bounds.centerX()
            data["y"] = bounds.centerY()
        }
        if (long) data["long"] = true
        EventLog.report("tap", packageName, data)
    }

    private fun typed(packageName: String, node: AccessibilityNodeInfo?, event: AccessibilityEvent) {
        val data = mutableMapOf<String, Any?>("field" to (node?.let { fieldName(it) } ?: ""))
        if (event.isPassword) data["password"] = true
        if (!event.isPassword || speaksPasswords()) {
            data["value"] = event.text.joinToString("") { it?.toString() ?: "" }
        }
        EventLog.report("text_typed", packageName, data)
    }

    // TextView gives accessibility its real text, not the dots, only with this setting on.
    private fun speaksPasswords(): Boolean =
        Settings.Secure.getInt(contentResolver, "speak_password", 0) == 1

    private fun fieldName(node: AccessibilityNodeInfo): String? =
        node.viewIdResourceName?.substringAfter(":id/", missingDelimiterValue = "")?.ifEmpty { null }

    override fun onInterrupt() = Unit
}
