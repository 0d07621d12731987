package main

// The lock services, the lock libraries measured as strategies and the driver family each
// register themselves (their flags, how they are reached or spawned, their strategies and
// Backend, their notes and cleanup) in init: internal/builtin imports them all, one line
// each, and the schema generator imports the same list. Redis, the home service, is also
// imported by package session, which asks more of it.
import _ "github.com/lockbench/lockbench/internal/builtin"
