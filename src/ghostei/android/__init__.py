"""The Android backend: the device contract over adb (``pip install 'ghostei[android]'``).

``AndroidDevice`` drives an emulator or phone through the adb server with ``adbutils``; the
overlay helper app's source is in ``android/helper/`` of the repository, and ``PhishServer``
serves the phishing pages the helper opens. Importing this package does not need adbutils:
only creating a device does.
"""

from .apps import APPS, AndroidApp, PackageMap
from .device import AndroidDevice, DeviceError, shared_phish_server
from .phish import PhishServer
from .transport import AdbError, check_device, list_devices

__all__ = [
    "APPS",
    "AdbError",
    "AndroidApp",
    "AndroidDevice",
    "DeviceError",
    "PackageMap",
    "PhishServer",
    "check_device",
    "list_devices",
    "shared_phish_server",
]
