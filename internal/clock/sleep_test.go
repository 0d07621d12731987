package clock

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("a full sleep reported cut short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) || Sleep(ctx, 0) {
		t.Error("an ended context did not cut the sleep short")
	}
	if !Sleep(context.Background(), -time.Second) {
		t.Error("a negative sleep on a live context reported cut short")
	}
}
