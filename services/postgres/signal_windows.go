package postgres

import "os"

// interrupt: Windows spawns nothing to interrupt.
var interrupt os.Signal
