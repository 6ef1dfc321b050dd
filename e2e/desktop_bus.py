#!/usr/bin/python3
"""The desktop's side of the session bus, for the app's end-to-end tests (docs/desktop.md, "Tests").

- org.freedesktop.Notifications: a notification server that records every Notify call as a JSON line in
  $NOTIFY_RECORD, advertises `actions` or not (switchable) and `body-markup` (as dunst and GNOME do), and, on
  request, invokes an action or closes a notification as a person would, by emitting ActionInvoked /
  NotificationClosed. ForgeInvoke emits the same ActionInvoked from another connection on the bus, as any
  program of the session could: the app must not take it for the server's answer.
- org.kde.StatusNotifierWatcher: where tray icons register; each registration is recorded as a JSON line in
  $TRAY_RECORD ({"service": <bus name of the app>, "path": <item object path>}).

The tests drive it with gdbus: dev.codemode.TestDesktop.SetActions(b), .Invoke(u id, s key), .Close(u id),
.ForgeInvoke(u id, s key) -> s (the forging connection's unique name).
"""
import json
import os
import sys

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NOTIFICATIONS = "org.freedesktop.Notifications"
WATCHER = "org.kde.StatusNotifierWatcher"
TEST = "dev.codemode.TestDesktop"


def record(path, entry):
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


class Notifications(dbus.service.Object):
    def __init__(self, bus, record_path, actions):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.record_path = record_path
        self.actions = actions
        self.next_id = 1

    @dbus.service.method(NOTIFICATIONS, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body", "body-markup", "actions"] if self.actions else ["body", "body-markup"]

    @dbus.service.method(NOTIFICATIONS, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, icon, summary, body, actions, hints, timeout):
        nid = int(replaces_id) or self.next_id
        self.next_id = max(self.next_id, nid + 1)
        pairs = [str(a) for a in actions]
        record(self.record_path, {
            "id": nid, "app": str(app_name), "summary": str(summary), "body": str(body),
            "actions": dict(zip(pairs[0::2], pairs[1::2])),
            "advertised": self.actions, "markup": True,
        })
        return dbus.UInt32(nid)

    @dbus.service.method(NOTIFICATIONS, in_signature="u", out_signature="")
    def CloseNotification(self, nid):
        self.NotificationClosed(nid, dbus.UInt32(3))

    @dbus.service.method(NOTIFICATIONS, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("codemode-test-notifications", "codemode", "1", "1.2")

    @dbus.service.signal(NOTIFICATIONS, signature="us")
    def ActionInvoked(self, nid, key):
        pass

    @dbus.service.signal(NOTIFICATIONS, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.method(TEST, in_signature="b", out_signature="")
    def SetActions(self, actions):
        self.actions = bool(actions)

    @dbus.service.method(TEST, in_signature="us", out_signature="")
    def Invoke(self, nid, key):
        self.ActionInvoked(dbus.UInt32(nid), key)

    @dbus.service.method(TEST, in_signature="u", out_signature="")
    def Close(self, nid):
        self.NotificationClosed(dbus.UInt32(nid), dbus.UInt32(2))

    @dbus.service.method(TEST, in_signature="us", out_signature="s")
    def ForgeInvoke(self, nid, key):
        # A connection of its own: the signal carries the same path, interface, member and arguments as the
        # server's, and only its sender (this connection's unique name) tells it apart.
        other = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
        try:
            signal = dbus.lowlevel.SignalMessage("/org/freedesktop/Notifications", NOTIFICATIONS, "ActionInvoked")
            signal.append(dbus.UInt32(nid), str(key), signature="us")
            other.send_message(signal)
            other.flush()
            return other.get_unique_name()
        finally:
            other.close()


class Watcher(dbus.service.Object):
    def __init__(self, bus, record_path):
        super().__init__(bus, "/StatusNotifierWatcher")
        self.record_path = record_path
        self.items = []

    @dbus.service.method(WATCHER, in_signature="s", out_signature="", sender_keyword="sender")
    def RegisterStatusNotifierItem(self, service, sender=None):
        # libayatana sends its object path; the item lives on the caller's connection.
        path = service if service.startswith("/") else "/StatusNotifierItem"
        name = sender if service.startswith("/") else service
        self.items.append(f"{name}{path}")
        record(self.record_path, {"service": str(name), "path": str(path)})
        self.StatusNotifierItemRegistered(f"{name}{path}")

    @dbus.service.method(WATCHER, in_signature="s", out_signature="")
    def RegisterStatusNotifierHost(self, service):
        pass

    @dbus.service.signal(WATCHER, signature="s")
    def StatusNotifierItemRegistered(self, item):
        pass

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        return self.GetAll(interface)[prop]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "RegisteredStatusNotifierItems": dbus.Array(self.items, signature="s"),
            "IsStatusNotifierHostRegistered": True,
            "ProtocolVersion": dbus.Int32(0),
        }


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    keep = []
    if os.environ.get("NOTIFY_RECORD"):
        name = dbus.service.BusName(NOTIFICATIONS, bus, do_not_queue=True)
        keep += [name, Notifications(bus, os.environ["NOTIFY_RECORD"], os.environ.get("NOTIFY_ACTIONS", "1") == "1")]
    if os.environ.get("TRAY_RECORD"):
        name = dbus.service.BusName(WATCHER, bus, do_not_queue=True)
        keep += [name, Watcher(bus, os.environ["TRAY_RECORD"])]
    print("ready", flush=True)
    sys.stdout.close()
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
