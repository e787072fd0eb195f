package com.example.myapplication

import android.app.Notification
import android.service.notification.NotificationListenerService
import android.service.notification.StatusBarNotification

/**
 * Notifications as an observer of the shade sees them, reported as `GhostEI` logcat lines in
 * the simulator's vocabulary: `notification_posted` and `notification_opened` (tapped) with
 * `id` (the notification's key), `title` and `body`; `notification_dismissed` (swiped away or
 * cancelled by the user) with `id`. Enabled with `ghostei android setup` (`cmd notification
 * allow_listener com.example.myapplication/.GhostNotificationListener`).
 */
class GhostNotificationListener : NotificationListenerService() {

    override fun onNotificationPosted(sbn: StatusBarNotification) {
        EventLog.report("notification_posted", sbn.packageName, described(sbn))
    }

    override fun onNotificationRemoved(
        sbn: StatusBarNotification,
        rankingMap: RankingMap,
        reason: Int,
    ) {
        when (reason) {
            REASON_CLICK -> EventLog.report("notification_opened", sbn.packageName, described(sbn))
            REASON_CANCEL, REASON_CANCEL_ALL ->
                EventLog.report("notification_dismissed", sbn.packageName, mapOf("id" to sbn.key))
        }
    }

    private fun described(sbn: StatusBarNotification): Map<String, Any?> {
        val extras = sbn.notification.extras
        return mapOf(
            "id" to sbn.key,
            "title" to (extras.getCharSequence(Notification.EXTRA_TITLE)?.toString() ?: ""),
            "body" to (extras.getCharSequence(Notification.EXTRA_TEXT)?.toString() ?: ""),
        )
    }
}
