"""What an API-34 emulator's file system looks like from a root shell: its skeleton.

The folders a fresh phone has in shared storage, the directories of the root file system, which
mounts are read-only, the programs in ``/system/bin`` and the modes ``ls -l`` shows.
"""

from __future__ import annotations

import stat

SDCARD = "/sdcard"
# Every spelling of shared storage on API 34; the first is the one world files use.
STORAGE_ALIASES = ("/sdcard", "/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard")
# The folders a fresh API-34 phone has in shared storage.
STANDARD_FOLDERS = (
    "Alarms",
    "Android",
    "Audiobooks",
    "DCIM",
    "Documents",
    "Download",
    "Movies",
    "Music",
    "Notifications",
    "Pictures",
    "Podcasts",
    "Recordings",
    "Ringtones",
)
# Symlinks of the root file system, resolved when a path is looked up.
LINKS = {"/bin": "/system/bin", "/etc": "/system/etc"}
# The skeleton directories of an API-34 emulator that a shell can list.
SKELETON_DIRS = frozenset(
    {
        "/",
        "/acct",
        "/apex",
        "/cache",
        "/config",
        "/data",
        "/data/local",
        "/data/local/tmp",
        "/dev",
        "/metadata",
        "/mnt",
        "/odm",
        "/oem",
        "/proc",
        "/product",
        "/storage",
        "/storage/emulated",
        "/storage/self",
        "/sys",
        "/system",
        "/system/bin",
        "/system/etc",
        "/system_ext",
        "/vendor",
    }
)
# Mount points that are read-only on an emulator (the root file system is too).
READ_ONLY = ("/system", "/system_ext", "/vendor", "/product", "/odm", "/apex", "/proc", "/sys")
# Where adbd, running as root, may create files outside shared storage.
WRITABLE = ("/data", "/cache", "/mnt", "/dev")
# The programs /system/bin lists: the commands the served phone's shell answers.
SYSTEM_BIN = (
    "am",
    "appops",
    "base64",
    "basename",
    "cat",
    "cmd",
    "content",
    "cp",
    "cut",
    "date",
    "dirname",
    "dumpsys",
    "echo",
    "false",
    "find",
    "getprop",
    "grep",
    "head",
    "id",
    "ime",
    "input",
    "logcat",
    "ls",
    "md5sum",
    "mkdir",
    "monkey",
    "mv",
    "pidof",
    "pm",
    "printf",
    "ps",
    "pwd",
    "rm",
    "rmdir",
    "screencap",
    "settings",
    "sh",
    "sha1sum",
    "sha256sum",
    "sleep",
    "sort",
    "stat",
    "svc",
    "tail",
    "test",
    "touch",
    "toybox",
    "true",
    "uiautomator",
    "uniq",
    "wc",
    "which",
    "whoami",
    "wm",
)
# The first bytes of an x86-64 ELF executable: what reading a /system/bin program gives.
ELF_HEADER = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x03\x00\x3e\x00\x01\x00\x00\x00"

DIR_MODE = stat.S_IFDIR | 0o771
SDCARD_DIR_MODE = stat.S_IFDIR | 0o2770  # drwxrws--- as FUSE shows shared storage
SDCARD_FILE_MODE = stat.S_IFREG | 0o660
BIN_MODE = stat.S_IFREG | 0o755
NULL_MODE = stat.S_IFCHR | 0o666
