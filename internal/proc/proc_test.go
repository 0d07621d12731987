//go:build unix

package proc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A killed lockbench leaves its servers' directories behind; the next one removes those
// whose owner is gone, target's and the services' alike, and leaves alone a live owner's,
// a `target up` directory (it outlives its maker: `target down` removes it) and one that
// is not lockbench's.
func TestSweepRemovesDeadOwnersDirectories(t *testing.T) {
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	mk := func(name string, pid int) string {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if pid != 0 {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	var gone []string
	for _, name := range tempNames {
		gone = append(gone, mk(tempPrefix(name)+"1", dead.Process.Pid))
	}
	kept := []string{
		mk("lockbench-postgres-2", os.Getpid()),
		mk("lockbench-redis-3", os.Getpid()),
		mk("lockbench-target-single-4", dead.Process.Pid), // target up's
		mk("lockbench-etcd-5", 0),                         // no owner file
		mk("other-redis-6", dead.Process.Pid),             // not lockbench's
	}
	Sweep(root)
	for _, d := range gone {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the directory %s of a dead owner is still there (%v)", filepath.Base(d), err)
		}
	}
	for _, d := range kept {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}

// TempDir makes a directory its sweep knows, recording this process as the owner; it
// refuses a name the sweep would never remove.
func TestTempDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := TempDir("etcd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if !strings.HasPrefix(filepath.Base(dir), "lockbench-etcd-") || !hasTempPrefix(filepath.Base(dir)) {
		t.Errorf("TempDir(etcd) = %s", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil || string(b) != strconv.Itoa(os.Getpid()) {
		t.Errorf("owner file: %q, %v; want %d", b, err, os.Getpid())
	}
	if d, err := TempDir("target"); err == nil {
		os.RemoveAll(d)
		t.Errorf("TempDir(target) = %s; want an error: `target up` directories are not swept", d)
	}
}

// Start merges into the caller's SysProcAttr: a field it does not own survives (services
// set Credential to run PostgreSQL as its user).
func TestStartKeepsSysProcAttr(t *testing.T) {
	if err := CanSpawn(); err != nil {
		t.Skip(err)
	}
	for _, detached := range []bool{false, true} {
		cmd := exec.Command("true")
		cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), NoSetGroups: true}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		start := Start
		if detached {
			start = StartDetached
		}
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if a := cmd.SysProcAttr; a.Credential != cred || a.Setsid != detached || a.Setpgid == detached {
			t.Errorf("detached=%v: SysProcAttr %+v", detached, a)
		}
	}
}

// State tells a live process from a gone one, and CommandLine names it.
func TestStateAndCommandLine(t *testing.T) {
	if err := CanSpawn(); err != nil {
		t.Skip(err)
	}
	if s := State(os.Getpid()); s == 0 || s == 'Z' {
		t.Errorf("State(self) = %q", s)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	if s := State(dead.Process.Pid); s != 0 {
		t.Errorf("State(reaped child) = %q, want 0", s)
	}
	line, err := CommandLine(os.Getpid())
	if err != nil || !strings.Contains(line, "proc.test") {
		t.Errorf("CommandLine(self) = %q, %v", line, err)
	}
}

// Owner names the user a process runs as, and ListensTCP sees a listener of the process
// on its port only: not another port, not once closed, not in another process.
func TestOwnerAndListensTCP(t *testing.T) {
	if err := CanSpawn(); err != nil {
		t.Skip(err)
	}
	if uid, err := Owner(os.Getpid()); err != nil || uid != os.Getuid() {
		t.Errorf("Owner(self) = %d, %v; want %d", uid, err, os.Getuid())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	other, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Skip("no sleep(1):", err)
	}
	t.Cleanup(func() { _ = Kill(sleep.Process.Pid); _ = sleep.Wait() })
	for _, c := range []struct {
		pid, port int
		want      bool
	}{
		{os.Getpid(), port, true},
		{os.Getpid(), other, false},
		{sleep.Process.Pid, port, false},
	} {
		if got, err := ListensTCP(c.pid, c.port); err != nil || got != c.want {
			t.Errorf("ListensTCP(%d, %d) = %v, %v; want %v", c.pid, c.port, got, err, c.want)
		}
	}
	l.Close()
	if got, err := ListensTCP(os.Getpid(), port); err != nil || got {
		t.Errorf("ListensTCP(self, %d) after Close = %v, %v; want false", port, got, err)
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(64)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: %d is zero or given twice", ports, p)
		}
		seen[p] = true
	}
}
