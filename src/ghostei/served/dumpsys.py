"""``dumpsys``: the services clients read the foreground app, the screen and the device from.

The formats follow API 34 in the lines clients parse:

- ``dumpsys activity activities``: per task ``mResumedActivity: ActivityRecord{… u0 pkg/.Act tN}``
  and ``topResumedActivity=…`` (adbutils ``app_current``, the upstream harness's foreground hook);
- ``dumpsys activity top``: ``ACTIVITY pkg/.Act hash pid=N``;
- ``dumpsys activity recents``: ``* Recent #i: Task{… #N type=standard A=uid:pkg}``, the
  overview's tasks, the most recent first;
- ``dumpsys window`` (all sections) and ``dumpsys window displays``:
  ``  mCurrentFocus=Window{… u0 pkg/full.Activity}`` and ``  mFocusedApp=ActivityRecord{…}``.
  ``dumpsys window windows`` lists the windows but, as on Android 10 and later, has no
  ``mCurrentFocus`` line (its ``imeLayeringTarget`` lines name the app window);
- ``dumpsys display``: the ``DisplayViewport{… orientation=0 … deviceWidth=W, deviceHeight=H}``
  line adbutils reads the rotation from.

The resumed activity is the phone's foreground app (the share sheet and overlays are windows
above it), so a client reading it sees what the simulator's triggers see.
"""

from __future__ import annotations

from ..sim.phone import SimPhone
from .commands import IO, Session, command
from .ime import GBOARD, SELECTED
from .package_manager import LAUNCHER_CATEGORY, MAIN, launchable
from .packages import (
    LAUNCHER,
    apk_path,
    hash_hex,
    installed,
    main_activity,
    pid,
    short_component,
    uid,
)
from .screen import activity_record, describe, focused_window, task_id, window_token
from .settings_provider import setting_get

SEPARATOR = "-" * 79
DISPLAY_UNIQUE_ID = "local:4619827259835644672"


def _running(phone: SimPhone) -> list[str]:
    """Packages with an activity, foreground first, then the others, the launcher last."""
    fg = phone.foreground_package
    apps = [a.package for a in reversed(list(phone.apps.values())) if a.package != fg]
    order = [fg, *apps]
    if LAUNCHER not in order:
        order.append(LAUNCHER)
    return order


def activities(phone: SimPhone) -> str:
    """``dumpsys activity activities``."""
    fg = phone.foreground_package
    lines = [
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
        "Display #0 (activities from top to bottom):",
    ]
    for package in _running(phone):
        t = task_id(phone, package)
        visible = "true" if package == fg else "false"
        kind = "home" if package == LAUNCHER else "standard"
        record = activity_record(phone, package)
        lines.append(
            f"  * Task{{{hash_hex('t' + package)} #{t} type={kind} A={uid(package)}:{package} "
            f"U=0 visible={visible} visibleRequested={visible} mode=fullscreen "
            f"translucent=false sz=1}}"
        )
        lines.append(f"    mLastPausedActivity: {'null' if package == fg else record}")
        if package == fg:
            lines.append(f"    mResumedActivity: {record}")
            lines.append(f"    topResumedActivity={record}")
        lines.append("    isSleeping=false")
        lines.append(f"    * Hist  #0: {record}")
        lines.append("")
    resumed = activity_record(phone, fg)
    lines += [
        "  Resumed activities in task display areas (from top to bottom):",
        f"    Resumed: {resumed}",
        "",
        f"  ResumedActivity: {resumed}",
        "",
        "ActivityTaskSupervisor state:",
        f"  topDisplayFocusedRootTask=Task{{{hash_hex('t' + fg)} #{task_id(phone, fg)} "
        f"type={'home' if fg == LAUNCHER else 'standard'} A={uid(fg)}:{fg}}}",
        f"  mCurTaskIdForUser={{0={task_id(phone, fg)}}}",
        "  mUserRootTaskInFront={}",
        "  mVisibilityTransactionDepth=0",
        "  isHomeRecentsComponent=true",
    ]
    return "\n".join(lines) + "\n"


def recents(phone: SimPhone) -> str:
    """``dumpsys activity recents``: the tasks of the overview, the most recent first."""
    lines = [
        "ACTIVITY MANAGER RECENT TASKS (dumpsys activity recents)",
        f"  mRecentsUid={uid(LAUNCHER)}",
        f"  mRecentsComponent=ComponentInfo{{{LAUNCHER}/com.android.quickstep.RecentsActivity}}",
        "  mFreezeTaskListReordering=false",
        "  mFreezeTaskListReorderingPendingTimeout=false",
        "",
        "  Recent tasks:",
    ]
    for i, label in enumerate(phone.recent_apps()):
        package = phone.apps[label].package
        lines.append(
            f"  * Recent #{i}: Task{{{hash_hex('t' + package)} #{task_id(phone, package)} "
            f"type=standard A={uid(package)}:{package}}}"
        )
    return "\n".join(lines) + "\n"


def activity_top(phone: SimPhone) -> str:
    """``dumpsys activity top``: the resumed task's activity."""
    fg = phone.foreground_package
    component = short_component(fg, main_activity(fg))
    return (
        f"TASK {uid(fg)}:{fg} id={task_id(phone, fg)} userId=0\n"
        f"  ACTIVITY {component} {hash_hex('a' + fg)} pid={pid(fg)}\n"
        f"    Local Activity {hash_hex('l' + fg)} State:\n"
        "      mResumed=true mStopped=false mFinished=false\n"
        "      mIsChangingConfigurations=false\n"
    )


def window_windows(phone: SimPhone) -> str:
    """``dumpsys window windows``."""
    infos = describe(phone)
    lines = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
    for i, info in enumerate(infos):
        left, top, right, bottom = info.window.frame
        owner = info.window.package
        lines += [
            f"  Window #{i} {info.token}:",
            f"    mDisplayId=0 rootTaskId=1 mSession=Session{{{hash_hex('s' + owner)} "
            f"{pid(owner)}:u0a{uid(owner) % 10000}}} mClient=android.os.BinderProxy@"
            f"{hash_hex('c' + info.tag)}",
            f"    mOwnerUid={uid(owner)} showForAllUsers=false package={owner} appop=NONE",
            f"    mAttrs={{(0,0)(fillxfill) ty={info.wm_type} fmt=TRANSLUCENT}}",
            f"    Frames: parent=[0,0][{phone.width},{phone.height}] "
            f"display=[0,0][{phone.width},{phone.height}] "
            f"frame=[{left},{top}][{right},{bottom}]",
            "    isOnScreen=true",
            "    isVisible=true",
        ]
    app = next((w for w in infos if w.wm_type == "BASE_APPLICATION"), None)
    target = app.token if app is not None else "null"
    lines += [
        "",
        f"  mGlobalConfiguration={{1.0 310mcc260mnc [en_US] ldltr sw411dp w411dp h914dp "
        f"{round(phone.density * 160)}dpi nrml long port finger qwerty/v/v -nav/h}}",
        "  mHasPermanentDpad=false",
        "  mTopFocusedDisplayId=0",
        f"  imeLayeringTarget in display# 0 {target}",
        f"  imeInputTarget in display# 0 {target}",
        f"  imeControlTarget in display# 0 {target}",
        "  Minimum task size of display#0 220  mInTouchMode=true",
        "  mBlurEnabled=true",
        "  mDisableSecureWindows=false",
        "  mHighResSnapshotScale=0.8",
        "  mSnapshotEnabled=true",
        f"  mInputMethodWindow={window_token('InputMethod')}",
        "  mSystemBooted=true mDisplayEnabled=true",
    ]
    return "\n".join(lines) + "\n"


def window_displays(phone: SimPhone) -> str:
    """``dumpsys window displays``: per display, the focused window and app."""
    focus = focused_window(phone)
    w, h = phone.width, phone.height
    dpi = round(phone.density * 160)
    return (
        "\n".join(
            [
                "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
                f"  Display: mDisplayId=0 rootTasks={len(_running(phone))}",
                f"    init={w}x{h} {dpi}dpi base={w}x{h} {dpi}dpi cur={w}x{h} app={w}x{h}",
                "    deferred=false mLayoutNeeded=false",
                "",
                f"  mCurrentFocus={focus.token if focus is not None else 'null'}",
                f"  mFocusedApp={activity_record(phone, phone.foreground_package)}",
            ]
        )
        + "\n"
    )


# The window policy's state: awake, screen on, no keyguard (the lines lock-screen checks read:
# Appium's ``mShowingLockscreen``, ``mDreamingLockscreen``, ``isStatusBarKeyguard`` and the
# keyguard state monitor's ``mIsShowing``).
POLICY = """WINDOW MANAGER POLICY STATE (dumpsys window policy)
    mSafeMode=false mSystemReady=true mSystemBooted=true
    mCameraLensCoverState=LENS_COVER_ABSENT
    mLidState=LID_ABSENT mLidBehavior=LID_BEHAVIOR_NONE
    mDockMode=EXTRA_DOCK_STATE_UNDOCKED
    mDefaultDisplayPolicy.mAwake=true
    mShowingLockscreen=false mShowingDream=false mDreamingLockscreen=false
    mScreenOnEarly=true mScreenOnFully=true
    mKeyguardDrawComplete=true mWindowManagerDrawComplete=true
    isStatusBarKeyguard=false
    KeyguardServiceDelegate
      showing=false
      inputRestricted=false
      occluded=false
      secure=false
      dreaming=false
      systemIsReady=true
      deviceHasKeyguard=false
      enabled=true
      currentUser=0
      bootCompleted=true
      screenState=SCREEN_STATE_ON
      interactiveState=INTERACTIVE_STATE_AWAKE
      KeyguardStateMonitor
        mIsShowing=false
        mSimSecure=false
        mInputRestricted=false
        mTrusted=false
        mCurrentUserId=0
"""


def window_all(phone: SimPhone) -> str:
    """``dumpsys window``: its sections, separated as dumpsys separates them."""
    return f"{SEPARATOR}\n".join([POLICY, window_displays(phone), window_windows(phone)])


def input_service(phone: SimPhone) -> str:
    """``dumpsys input``: the touch screen's surface (Midscene reads ``SurfaceOrientation``)."""
    w, h = phone.width, phone.height
    return (
        "INPUT MANAGER (dumpsys input)\n"
        "\n"
        "Input Manager State:\n"
        "  Interactive: true\n"
        "  System UI Lights Out: false\n"
        "  Pointer Speed: 0\n"
        "  Pointer Gestures Enabled: true\n"
        "  Show Touches: false\n"
        "\n"
        "Event Hub State:\n"
        "  BuiltInKeyboardId: -2\n"
        "  Devices:\n"
        "    2: virtio_input_multi_touch_1\n"
        "      Classes: TOUCH | TOUCH_MT\n"
        "\n"
        "Input Reader State (Nums of device: 1):\n"
        "  Device 2: virtio_input_multi_touch_1\n"
        "    Generation: 2\n"
        "    IsExternal: false\n"
        "    AssociatedDisplayPort: <none>\n"
        "    Sources: TOUCHSCREEN\n"
        "    Touch Input Mapper (mode - DIRECT):\n"
        "      Parameters:\n"
        "        DeviceType: touchScreen\n"
        "        Orientation: ROTATION_0\n"
        f"      Viewport INTERNAL: displayId=0, uniqueId={DISPLAY_UNIQUE_ID}, port=0, "
        f"orientation=0, logicalFrame=[0, 0, {w}, {h}], physicalFrame=[0, 0, {w}, {h}], "
        f"deviceSize=[{w}, {h}], isActive=[1]\n"
        f"      DisplayBounds: {w}x{h}\n"
        f"      SurfaceWidth: {w}px\n"
        f"      SurfaceHeight: {h}px\n"
        "      SurfaceLeft: 0\n"
        "      SurfaceTop: 0\n"
        "      SurfaceOrientation: 0\n"
        f"      Translation and Scaling Factors:\n"
        "        XScale: 1.000\n"
        "        YScale: 1.000\n"
    )


def display(phone: SimPhone) -> str:
    """``dumpsys display``."""
    w, h = phone.width, phone.height
    dpi = round(phone.density * 160)
    return (
        "DISPLAY MANAGER (dumpsys display)\n"
        "  mOnlyCode=false\n"
        "  mSafeMode=false\n"
        "  mPendingTraversal=false\n"
        f"  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, "
        f"uniqueId='{DISPLAY_UNIQUE_ID}', physicalPort=0, orientation=0, "
        f"logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {w}, {h}), "
        f"deviceWidth={w}, deviceHeight={h}}}]\n"
        "  mDefaultDisplayDefaultColorMode=0\n"
        "Display Devices: size=1\n"
        '  DisplayDeviceInfo{"Built-in Screen": uniqueId="'
        f'{DISPLAY_UNIQUE_ID}", {w} x {h}, modeId 1, renderFrameRate 60.0, density {dpi}, '
        f"{dpi}.0 x {dpi}.0 dpi, type INTERNAL, state ON}}\n"
        f'  mBaseDisplayInfo=DisplayInfo{{"Built-in Screen", displayId 0, real {w} x {h}, '
        f"largest app {w} x {h}, smallest app {w} x {h}, density {dpi}, rotation 0, "
        "state ON}\n"
    )


def input_method(phone: SimPhone, selected: str = GBOARD) -> str:
    """``dumpsys input_method``: the selected input method and whether the keyboard is up."""
    shown = "true" if phone.observe().keyboard_shown else "false"
    return (
        "Current Input Method Manager state:\n"
        f"  mCurMethodId={selected}\n"
        f"  mInputShown={shown}\n"
        f"  mShowRequested={shown}\n"
    )


BATTERY = """Current Battery Service state:
  AC powered: true
  USB powered: false
  Wireless powered: false
  Dock powered: false
  Max charging current: 0
  Max charging voltage: 0
  Charge counter: 10000
  status: 2
  health: 2
  present: true
  level: 100
  scale: 100
  voltage: 5000
  temperature: 250
  technology: Li-ion
"""

POWER = """POWER MANAGER (dumpsys power)
Power Manager State:
  mDirty=0x0
  mWakefulness=Awake
  mWakefulnessRaw=Awake
  mWakefulnessChanging=false
  mIsPowered=true
  mPlugType=1
  mStayOn=false
  mHoldingWakeLockSuspendBlocker=true
  mHoldingDisplaySuspendBlocker=true

Display Power: state=ON
"""


def package(phone: SimPhone, name: str) -> str:
    """``dumpsys package NAME``: the fields adbutils' app_info reads."""
    if not installed(name):
        return ""
    stamp = phone.world.clock[:10] + " 08:00:00"
    return (
        "Packages:\n"
        f"  Package [{name}] ({hash_hex('p' + name)}):\n"
        f"    userId={uid(name)}\n"
        f"    codePath={apk_path(name).rsplit('/', 1)[0]}\n"
        "    versionCode=1 minSdk=26 targetSdk=34\n"
        "    versionName=1.0\n"
        "    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n"
        f"    firstInstallTime={stamp}\n"
        f"    lastUpdateTime={stamp}\n"
        f"    signatures=PackageSignatures{{{hash_hex('sig' + name)} version:3, "
        f"signatures:[{hash_hex('cert' + name)}], past signatures:[]}}\n"
    )


def package_dump(phone: SimPhone, name: str) -> str:
    """``dumpsys package NAME`` (and ``pm dump NAME``): its resolver table, then the package."""
    dump = package(phone, name)
    return resolver_table(name) + dump if dump else ""


def resolver_table(name: str) -> str:
    """The ``Activity Resolver Table`` a package's dump starts with: its launcher activity's
    MAIN/LAUNCHER filter (what Appium's adb library reads on older APIs)."""
    found = [r for r in launchable() if r.package == name]
    if not found:
        return ""
    lines = ["Activity Resolver Table:", "  Non-Data Actions:", f"      {MAIN}:"]
    for resolved in found:
        lines += [
            f"        {hash_hex('r' + name)} {resolved.component} filter {hash_hex('f' + name)}",
            f'          Action: "{MAIN}"',
            f'          Category: "{LAUNCHER_CATEGORY}"',
        ]
    return "\n".join(lines) + "\n\n"


@command("dumpsys")
def dumpsys(session: Session, argv: list[str], io: IO) -> int:
    """dumpsys SERVICE [ARGS]: activity, window, display, input_method, power, battery, ..."""
    phone = session.phone
    service = argv[1] if len(argv) > 1 else ""
    args = argv[2:]
    what = args[0] if args else ""
    if service == "activity":
        if what in ("activities", "a"):
            io.write(activities(phone))
        elif what == "top":
            io.write(activity_top(phone))
        elif what in ("recents", "r"):
            io.write(recents(phone))
        else:
            io.write(activities(phone))
    elif service == "window":
        if what in ("windows", "w"):
            io.write(window_windows(phone))
        elif what in ("displays", "d"):
            io.write(window_displays(phone))
        elif what in ("policy", "p"):
            io.write(POLICY)
        else:
            io.write(window_all(phone))
    elif service == "display":
        io.write(display(phone))
    elif service == "input_method":
        io.write(input_method(phone, setting_get(session, "secure", SELECTED) or GBOARD))
    elif service == "power":
        io.write(POWER)
    elif service == "battery":
        io.write(BATTERY)
    elif service == "package" and what:
        io.write(package_dump(phone, what))
    elif service == "input":
        io.write(input_service(phone))
    elif service == "SurfaceFlinger" and "--display-id" in args:
        io.print(
            "Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL "
            'displayName="EMU_display_0"'
        )
    elif service == "-l" or not service:
        io.print("Currently running services:")
        for name in (
            "SurfaceFlinger",
            "activity",
            "battery",
            "display",
            "input",
            "input_method",
            "package",
            "power",
            "window",
        ):
            io.print(f"  {name}")
    else:
        io.error(f"Can't find service: {service}")
    return 0
