"""Who and what the served phone is: getprop, pm, id, whoami, ps, pidof.

It presents itself as the API-34 x86_64 Google APIs emulator image (``sdk_gphone64_x86_64``),
with adbd running as root (the ``root:`` service answers "adbd is already running as root").
"""

from __future__ import annotations

from ..android.helper import HELPER_PACKAGE
from . import dumpsys as dumpsys_module
from .commands import IO, Session, UsageError, command
from .coreutils import parse_flags
from .package_manager import query_activities, resolve_activity
from .packages import apk_path, app_of, packages, pid, uid

BUILD_ID = "UE1A.230829.036.A4"
FINGERPRINT = f"google/sdk_gphone64_x86_64/emu64x:14/{BUILD_ID}/11228894:userdebug/dev-keys"


def properties(serial: str) -> dict[str, str]:
    """The system properties of the served phone (``serial`` is adb's name for it)."""
    # An emulator's own serial number is not adb's "emulator-5554"; it is made from the
    # emulator's build and instance, so each served phone has its own.
    number = "".join(ch for ch in serial if ch.isdigit()) or "0"
    serialno = f"EMULATOR34X1X{number}X0"
    return {
        "dev.bootcomplete": "1",
        "init.svc.adbd": "running",
        "init.svc.bootanim": "stopped",
        "persist.sys.locale": "en-US",
        "persist.sys.timezone": "GMT",
        "persist.sys.usb.config": "adb",
        "ro.adb.secure": "0",
        "ro.boot.hardware": "ranchu",
        "ro.boot.qemu": "1",
        "ro.boot.serialno": serialno,
        "ro.build.characteristics": "emulator",
        "ro.build.description": f"sdk_gphone64_x86_64-userdebug 14 {BUILD_ID} 11228894 dev-keys",
        "ro.build.display.id": f"sdk_gphone64_x86_64-userdebug 14 {BUILD_ID} 11228894 dev-keys",
        "ro.build.fingerprint": FINGERPRINT,
        "ro.build.id": BUILD_ID,
        "ro.build.tags": "dev-keys",
        "ro.build.type": "userdebug",
        "ro.build.version.codename": "REL",
        "ro.build.version.incremental": "11228894",
        "ro.build.version.release": "14",
        "ro.build.version.release_or_codename": "14",
        "ro.build.version.sdk": "34",
        "ro.build.version.security_patch": "2023-09-05",
        "ro.debuggable": "1",
        "ro.hardware": "ranchu",
        "ro.kernel.qemu": "1",
        "ro.product.board": "goldfish_x86_64",
        "ro.product.brand": "google",
        "ro.product.cpu.abi": "x86_64",
        "ro.product.cpu.abilist": "x86_64,arm64-v8a",
        "ro.product.cpu.abilist64": "x86_64,arm64-v8a",
        "ro.product.device": "emu64x",
        "ro.product.locale": "en-US",
        "ro.product.manufacturer": "Google",
        "ro.product.model": "sdk_gphone64_x86_64",
        "ro.product.name": "sdk_gphone64_x86_64",
        "ro.secure": "1",
        "ro.serialno": serialno,
        "ro.sf.lcd_density": "420",
        "service.adb.root": "1",
        "sys.boot_completed": "1",
        "sys.usb.state": "adb",
    }


# ``pm list features`` of the API-34 x86_64 Google APIs emulator (a selection).
FEATURES = (
    "reqGlEsVersion=0x30000",
    "android.hardware.audio.output",
    "android.hardware.camera",
    "android.hardware.camera.any",
    "android.hardware.faketouch",
    "android.hardware.location",
    "android.hardware.location.gps",
    "android.hardware.microphone",
    "android.hardware.screen.portrait",
    "android.hardware.sensor.accelerometer",
    "android.hardware.telephony",
    "android.hardware.telephony.messaging",
    "android.hardware.touchscreen",
    "android.hardware.touchscreen.multitouch",
    "android.hardware.wifi",
    "android.software.input_methods",
    "android.software.webview",
)


@command("getprop")
def getprop(session: Session, argv: list[str], io: IO) -> int:
    """getprop [NAME [DEFAULT]]: one value (an empty line if unset) or every ``[k]: [v]``."""
    props = properties(session.serial)
    props["ro.sf.lcd_density"] = str(round(session.phone.density * 160))
    if len(argv) > 1:
        io.print(props.get(argv[1], argv[2] if len(argv) > 2 else ""))
        return 0
    for key in sorted(props):
        io.print(f"[{key}]: [{props[key]}]")
    return 0


@command("id")
def id_(session: Session, argv: list[str], io: IO) -> int:
    """id: the root shell's identity."""
    io.print(
        "uid=0(root) gid=0(root) groups=0(root),1004(input),1007(log),1011(adb),"
        "1015(sdcard_rw),1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),"
        "3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs)"
        " context=u:r:su:s0"
    )
    return 0


@command("whoami")
def whoami(session: Session, argv: list[str], io: IO) -> int:
    """whoami."""
    io.print("root")
    return 0


@command("pm")
def pm(session: Session, argv: list[str], io: IO) -> int:
    """pm list packages [-3 -s -f -e -d -u -i -U] [FILTER] | pm query-activities INTENT |
    pm resolve-activity INTENT | pm path PKG | pm clear PKG | ..."""
    args = argv[1:]
    sub = args[0] if args else ""
    if sub == "list" and args[1:2] == ["packages"]:
        listed = [a for i, a in enumerate(args[2:]) if a != "--user" and args[1 + i] != "--user"]
        listed = [a for a in listed if a not in ("--show-versioncode", "--apex-only")]
        opts, rest = parse_flags(listed, "3sfedulaiUA", "")
        needle = rest[0] if rest else ""
        for pkg in packages(session.phone):
            if ("3" in opts and pkg.system) or ("s" in opts and not pkg.system):
                continue
            if "d" in opts or (needle and needle not in pkg.name):
                continue  # -d: the disabled ones, and none is
            path = f"{apk_path(pkg.name)}=" if "f" in opts else ""
            line = f"package:{path}{pkg.name}"
            if "--show-versioncode" in args[2:]:
                line += " versionCode:1"
            if "i" in opts:
                line += "  installer=" + ("null" if pkg.system else "com.android.vending")
            if "U" in opts:
                line += f" uid:{uid(pkg.name)}"
            io.print(line)
        return 0
    if sub == "query-activities":
        return query_activities(session, args[1:], io)
    if sub == "resolve-activity":
        return resolve_activity(session, args[1:], io)
    if sub == "path" and len(args) > 1:
        if not any(p.name == args[1] for p in packages(session.phone)):
            return 1
        io.print(f"package:{apk_path(args[1])}")
        return 0
    if sub == "clear" and len(args) > 1:
        force_stop(session, args[-1])
        io.print("Success")
        return 0
    if sub in ("grant", "revoke", "enable", "disable-user", "set-home-activity"):
        return 0
    if sub == "dump" and len(args) > 1:
        io.write(dumpsys_module.package_dump(session.phone, args[1]))
        return 0
    if sub == "list" and args[1:2] == ["features"]:
        for feature in FEATURES:
            io.print(f"feature:{feature}")
        return 0
    if sub == "list" and args[1:2] == ["users"]:
        io.print("Users:")
        io.print("\tUserInfo{0:Owner:c13} running")
        return 0
    if sub == "get-max-users":
        io.print("Maximum supported users: 4")
        return 0
    if sub in ("install", "install-create", "uninstall"):
        io.error("Failure [INSTALL_FAILED_INTERNAL_ERROR: the simulated phone installs no APKs]")
        return 1
    raise UsageError(f"Unknown command: {sub}" if sub else "usage: pm [list|path|clear|dump]", 255)


def force_stop(session: Session, package: str) -> None:
    """Force-stop a package: its app loses its state; if it was in front, Home shows."""
    phone = session.phone
    cls = app_of(package)
    if cls is None or cls.label not in phone.apps:
        return
    del phone.apps[cls.label]
    if phone.foreground == cls.label:
        phone.foreground = None


@command("ps")
def ps(session: Session, argv: list[str], io: IO) -> int:
    """ps [-A]: system processes and every app process running."""
    phone = session.phone
    io.print("USER            PID   PPID        VSZ    RSS WCHAN            ADDR S NAME")
    rows = [("root", 1, 0, "init"), ("system", pid(""), 349, "system_server")]
    running = ["com.android.systemui", "com.google.android.inputmethod.latin", HELPER_PACKAGE]
    running += ["com.google.android.apps.nexuslauncher"]
    running += [app.package for app in phone.apps.values()]
    for name in running:
        user = "system" if uid(name) == 1000 else f"u0_a{uid(name) % 10000}"
        rows.append((user, pid(name), 349, name))
    for user, number, parent, name in rows:
        io.print(
            f"{user:<12} {number:>6} {parent:>6} {12345678:>10} {98765:>6} 0{'':>19} 0 S {name}"
        )
    return 0


@command("pidof")
def pidof(session: Session, argv: list[str], io: IO) -> int:
    """pidof NAME...: the pid of running app processes."""
    running = {app.package for app in session.phone.apps.values()}
    running |= {"com.android.systemui", "com.google.android.apps.nexuslauncher", HELPER_PACKAGE}
    found = [str(pid(name)) for name in argv[1:] if name in running]
    if not found:
        return 1
    io.print(" ".join(found))
    return 0
