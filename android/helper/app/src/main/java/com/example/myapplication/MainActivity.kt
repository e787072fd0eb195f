package com.example.myapplication

import android.app.Activity
import android.content.Intent
import android.net.Uri
import android.os.Bundle
import android.provider.Settings
import android.widget.TextView

/** Shows whether overlays are allowed, and opens the permission screen if they are not. */
class MainActivity : Activity() {
    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        val allowed = Settings.canDrawOverlays(this)
        setContentView(TextView(this).apply {
            setPadding(48, 96, 48, 48)
            textSize = 18f
            text = if (allowed) {
                "GhostEI helper is ready: overlays are allowed."
            } else {
                "Allow \"Display over other apps\" for the GhostEI helper, or run\n" +
                    "adb shell appops set $packageName SYSTEM_ALERT_WINDOW allow"
            }
        })
        if (!allowed) {
            startActivity(
                Intent(Settings.ACTION_MANAGE_OVERLAY_PERMISSION, Uri.parse("package:$packageName"))
            )
        }
    }
}
