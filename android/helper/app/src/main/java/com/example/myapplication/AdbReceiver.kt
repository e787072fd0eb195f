package com.example.myapplication

import android.content.BroadcastReceiver
import android.content.Context
import android.content.Intent
import android.provider.Settings
import android.util.Log

/**
 * `am broadcast -n com.example.myapplication/.AdbReceiver -a com.example.broadcast.UPDATE_POPUP
 * --es title … --es content … --es cancel … --es confirm … --es weburl … --ez isUrgent true
 * [--es style dialog|bottom_sheet|fullscreen] [--es brand …] [--es consent …] [--es package …]
 * [--es served_url …]` draws an overlay.
 *
 * The overlay is drawn before onReceive returns, so its `overlay_shown` line is in logcat by
 * the time `am broadcast` prints "Broadcast completed".
 */
class AdbReceiver : BroadcastReceiver() {
    override fun onReceive(context: Context, intent: Intent) {
        if (intent.action != ACTION) return
        val app = context.applicationContext
        if (!Settings.canDrawOverlays(app)) {
            Log.e(EventLog.TAG, "no overlay permission: adb shell appops set " +
                "${app.packageName} SYSTEM_ALERT_WINDOW allow")
            resultCode = RESULT_NO_PERMISSION
            return
        }
        Overlays.show(app, OverlaySpec.from(intent))
    }

    companion object {
        const val ACTION = "com.example.broadcast.UPDATE_POPUP"
        const val RESULT_NO_PERMISSION = 1
    }
}
