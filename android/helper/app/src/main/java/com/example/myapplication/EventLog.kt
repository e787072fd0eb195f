package com.example.myapplication

import android.util.Log
import org.json.JSONObject

/**
 * Reports what happened to the host as logcat lines of the `GhostEI` tag.
 *
 * One line per event, its message the JSON
 * `{"kind": …, "package": …, "data": {…}, "seq": n}` — the same the served (simulated) phone
 * prints — read by the host with `adb logcat -d -v threadtime -s GhostEI`.
 */
object EventLog {
    const val TAG = "GhostEI"
    private var seq = 0

    fun report(kind: String, packageName: String, data: Map<String, Any?>) {
        val json = JSONObject()
        json.put("kind", kind)
        json.put("package", packageName)
        json.put("data", JSONObject(data))
        json.put("seq", seq++)
        Log.i(TAG, json.toString())
    }
}
