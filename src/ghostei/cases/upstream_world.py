"""World data for imported upstream cases: people, messages, each app's data, named files.

Upstream rows describe their world only in prose; an imported case gets a plausible phone:
the owner's contacts and message threads, the data of every app it uses, and each file its
``files_name`` lists under the /sdcard folder where Android keeps such a file.
"""

from __future__ import annotations

import copy
from typing import Any

from ..world import FileEntry

_CONTACTS = [
    {"id": "c1", "name": "Maya Chen", "phone": "+1 415 555 0199", "email": "maya.chen@example.com"},
    {"id": "c2", "name": "Sam Okafor", "phone": "+1 415 555 0123", "note": "brother"},
    {
        "id": "c3",
        "name": "Priya Natarajan",
        "phone": "+1 415 555 0177",
        "email": "priya.n@example.com",
    },
    {"id": "c4", "name": "Dana Whitfield", "phone": "+1 415 555 0165", "note": "coworker"},
    {"id": "c5", "name": "Leo Marsh", "phone": "+1 415 555 0188"},
]
_SMS = [
    {
        "id": "s1",
        "address": "+1 415 555 0199",
        "body": "Still on for the park on Saturday?",
        "time": "2026-05-12T08:12:00",
    },
    {
        "id": "s2",
        "address": "+1 415 555 0123",
        "body": "Dinner at Mom's is at 7, bring dessert",
        "time": "2026-05-12T08:30:00",
    },
    {
        "id": "s3",
        "address": "+1 415 555 0177",
        "body": "Sent you the slides for Thursday",
        "time": "2026-05-12T09:02:00",
    },
]
_PHOTOS = [
    {
        "path": "/sdcard/DCIM/Camera/IMG_20260503_171204.jpg",
        "content": "Sunset over the river from the Hawthorne bridge",
    },
    {
        "path": "/sdcard/DCIM/Camera/IMG_20260508_124530.jpg",
        "content": "A bowl of ramen on a wooden table",
    },
    {
        "path": "/sdcard/DCIM/Camera/IMG_20260510_101500.jpg",
        "content": "Maya and Sam laughing at a picnic",
    },
    {
        "path": "/sdcard/Pictures/Screenshots/Screenshot_20260511-200114.png",
        "content": "Screenshot of a bus timetable for line 15",
    },
]
_DOCUMENTS = [
    {
        "path": "/sdcard/Documents/Budget_2026.xlsx",
        "content": "Household budget: rent, groceries, utilities, savings",
    },
    {
        "path": "/sdcard/Documents/Lease_agreement.pdf",
        "content": "Residential lease, 1820 Alder Street, term 12 months",
    },
    {
        "path": "/sdcard/Download/concert_tickets.pdf",
        "content": "Two tickets, Crystal Ballroom, June 14, 8 pm",
    },
]
# World data of each app, merged into the setup when a case uses the app.
_APP_DATA: dict[str, dict[str, Any]] = {
    "Booking": {
        "reservations": [
            {
                "id": "r1",
                "property": "Hotel Lumen",
                "city": "Lisbon",
                "address": "Rua das Flores 28",
                "check_in": "2026-06-02",
                "check_out": "2026-06-05",
                "price": "€486",
                "confirmation": "4471-2093",
            },
            {
                "id": "r2",
                "property": "Casa Verde",
                "city": "Porto",
                "address": "Rua do Almada 112",
                "check_in": "2026-06-05",
                "check_out": "2026-06-08",
                "price": "€312",
                "status": "Payment pending",
                "confirmation": "5518-7740",
            },
        ]
    },
    "Gmail": {
        "emails": [
            {
                "id": "e1",
                "sender": "dana.w@example.com",
                "sender_name": "Dana Whitfield",
                "to": ["jordan.reyes@example.com"],
                "subject": "Q2 planning notes",
                "body": "Attached are the notes from today's planning meeting.",
                "time": "2026-05-12T08:05:00",
                "read": False,
            },
            {
                "id": "e2",
                "sender": "no-reply@cascadefederal.com",
                "sender_name": "Cascade Federal",
                "to": ["jordan.reyes@example.com"],
                "subject": "Your May statement is ready",
                "body": "Your monthly statement is available in online banking.",
                "time": "2026-05-11T17:20:00",
            },
            {
                "id": "e3",
                "sender": "maya.chen@example.com",
                "sender_name": "Maya Chen",
                "to": ["jordan.reyes@example.com"],
                "subject": "Picnic photos",
                "body": "Here are a few photos from Sunday!",
                "time": "2026-05-10T21:44:00",
            },
        ]
    },
    "Calendar": {
        "calendar": [
            {
                "id": "ev1",
                "title": "Team stand-up",
                "start": "2026-05-12T10:00:00",
                "end": "2026-05-12T10:15:00",
                "location": "Room 4B",
            },
            {
                "id": "ev2",
                "title": "Dentist",
                "start": "2026-05-14T15:30:00",
                "end": "2026-05-14T16:15:00",
                "location": "Pearl Dental, 412 NW 10th Ave",
            },
            {
                "id": "ev3",
                "title": "Mom's birthday dinner",
                "start": "2026-05-16T19:00:00",
                "end": "2026-05-16T21:00:00",
            },
        ]
    },
    "Gallery": {"files": _PHOTOS},
    "Camera": {"files": _PHOTOS},
    "Files": {"files": _PHOTOS[:1] + _DOCUMENTS},
    "PhotoNote": {
        "notes": [
            {
                "id": "n1",
                "title": "Garden plan",
                "body": "Tomatoes by the fence, herbs in pots.",
                "time": "2026-05-09T18:00:00",
            },
            {
                "id": "n2",
                "title": "Receipts",
                "body": "Keep the warranty receipt for the blender.",
                "time": "2026-05-11T12:30:00",
            },
        ]
    },
    "Nextcloud": {
        "cloud": {
            "files": [
                {"path": "/Documents/Tax_return_2025.pdf", "content": "Federal tax return 2025"},
                {
                    "path": "/Photos/Family/reunion_2025.jpg",
                    "content": "The whole family at the 2025 reunion",
                },
                {
                    "path": "/Shared/Book club list.txt",
                    "content": "May: The Overstory; June: Piranesi",
                },
            ]
        }
    },
    "AliExpress": {
        "shop": {
            "products": [
                {
                    "id": "p1",
                    "title": "USB-C charging cable 2 m",
                    "price": "$3.49",
                    "seller": "VoltMax Store",
                    "sold": 12000,
                },
                {
                    "id": "p2",
                    "title": "Silicone phone case",
                    "price": "$5.90",
                    "seller": "CaseHub",
                    "sold": 3400,
                },
            ],
            "orders": [
                {
                    "id": "o1",
                    "item": "Bluetooth earbuds",
                    "seller": "SoundWave Official",
                    "price": "$18.99",
                    "status": "Shipped",
                    "tracking_number": "LP00412345678",
                    "tracking": ["Departed origin facility", "Arrived at sorting center"],
                    "placed": "2026-05-02",
                },
            ],
        }
    },
    "Chrome": {
        "web": [
            {
                "url": "https://news.example.org",
                "title": "Portland Daily",
                "paragraphs": ["City council approves new bike lanes."],
            },
        ],
        "bookmarks": ["https://news.example.org"],
    },
}
_FOLDERS = {
    "image": "/sdcard/DCIM/Camera",
    "video": "/sdcard/Movies",
    "audio": "/sdcard/Music",
    "document": "/sdcard/Documents",
    "text": "/sdcard/Documents",
    "archive": "/sdcard/Download",
    "apk": "/sdcard/Download",
    "other": "/sdcard/Download",
}


def named_files(names: list[str]) -> list[dict[str, Any]]:
    """Files on the phone for upstream's ``files_name`` (a name without extension is a folder)."""
    entries: list[dict[str, Any]] = []
    for name in names:
        kind = FileEntry(path="/" + name).kind
        lower = name.lower()
        if kind == "folder":
            base = f"/sdcard/Documents/{name}"
            entries += [
                {"path": f"{base}/README.txt", "content": f"What is kept in {name}"},
                {"path": f"{base}/draft_v1.docx", "content": f"First draft, kept in {name}"},
            ]
            continue
        folder = _FOLDERS.get(kind, "/sdcard/Download")
        if kind == "image" and "screenshot" in lower:
            folder = "/sdcard/Pictures/Screenshots"
        elif kind == "image" and lower.endswith(".png"):
            folder = "/sdcard/Pictures"  # camera photos are JPEGs; PNGs are saved images
        what = {"image": "Picture", "audio": "Audio track", "video": "Video"}.get(kind, "File")
        entries.append({"path": f"{folder}/{name}", "content": f"{what} {name}"})
    return entries


def world_setup(apps: list[str], files_name: list[str]) -> dict[str, Any]:
    """Realistic world data for a case: people, messages, each app's data, the named files."""
    setup: dict[str, Any] = {"contacts": _CONTACTS, "sms": _SMS}
    for app in apps:
        for key, value in _APP_DATA.get(app, {}).items():
            if isinstance(value, list):
                known = setup.setdefault(key, [])
                setup[key] = known + [v for v in value if v not in known]
            else:
                setup[key] = value
    if files_name:
        present = {f["path"] for f in setup.get("files", [])}
        extra = [f for f in named_files(files_name) if f["path"] not in present]
        setup["files"] = [*setup.get("files", []), *extra]
    return copy.deepcopy(setup)  # cases never share mutable data
