"""The simulated phone served as an Android emulator: its shell, file system, adbd and console.

Kept import-light on purpose: ``ghostei`` must not pay for the emulator's modules unless a
served phone is started, so import the submodules you need (``ghostei.emulator.shell``,
``ghostei.emulator.vfs``, ...) directly.
"""
