"""The simulated phone served as an Android emulator: its shell, file system, adbd and console.

Named for what it is, the served phone (``ghostei device serve``): "emulator" is the word users
have for their own Android emulator. Kept import-light on purpose: ``ghostei`` must not pay for
the served phone's modules unless one is started, so import the submodules you need
(``ghostei.served.shell``, ``ghostei.served.vfs``, ...) directly.
"""
