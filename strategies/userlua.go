package strategies

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// userLua is a lock the user writes: Lua scripts in a directory, named lua:DIR (docs/lua.md
// is the contract). acquire.lua and release.lua are required, renew.lua optional; each runs
// by EVALSHA with KEYS[1] the lock key, ARGV[1] the lease's token and ARGV[2] the ttl in ms.
// Everything around the scripts is base's, as for token: the wait policies, the watchdog
// (with renew.lua), WaitReplicas, the hooks the faults use, the counters.
type userLua struct {
	*base
	c  rueidis.Client
	sc *userScripts
}

// userScripts are one directory's scripts, read and parsed once by loadUserLua.
type userScripts struct {
	dir                     string
	acquire, release, renew *luaScript // renew nil when the directory has none
	// native is the wait acquire.lua's "-- wait:" line declares, the lock's own under
	// --wait native; Kind WaitNative when it declares none (lockbench's default backoff).
	native Wait
}

// maxUserScript bounds each script file: a lock script is a few dozen lines, and a larger
// file is more likely a directory given by mistake than a lock.
const maxUserScript = 64 << 10

// userLoaded holds the scripts of every lua:DIR variant loaded, by DIR: the family's Load
// reads them, its constructor finds them here by the variant's name.
var userLoaded sync.Map // string -> *userScripts

func init() { registerFamily("lua", "lua:DIR", loadUserLua, newUserLua, false) }

// loadUserLua reads DIR's scripts and parses each with gopher-lua (Lua 5.1, as Redis runs),
// so that a missing file or a syntax error is a one-line error naming the file and line
// before anything connects. Redis compiles the script again on its first EVAL; a parse does
// not catch what only running finds (a global, a wrong command).
func loadUserLua(dir string) (Info, error) {
	bad := func(reason string) error {
		return &OptionError{Field: "strategy", Value: "lua:" + dir, Reason: reason}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return Info{}, bad(fmt.Sprintf("no directory %s (a relative DIR is read from the current directory)", dir))
	}
	if !fi.IsDir() {
		return Info{}, bad(dir + " is not a directory; lua:DIR names a directory with acquire.lua and release.lua (renew.lua optional)")
	}
	sc := &userScripts{dir: dir}
	var header string
	for _, f := range []struct {
		file     string
		required bool
		into     **luaScript
	}{{"acquire.lua", true, &sc.acquire}, {"release.lua", true, &sc.release}, {"renew.lua", false, &sc.renew}} {
		src, err := readUserScript(filepath.Join(dir, f.file), f.file, f.required)
		if err != nil {
			return Info{}, bad(err.Error())
		}
		if src == "" {
			continue // an optional file that is absent
		}
		if f.file == "acquire.lua" {
			header = src
		}
		*f.into = newLuaScript(src)
	}
	info, native, err := userInfo(dir, header, sc.renew != nil)
	if err != nil {
		return Info{}, bad(err.Error())
	}
	sc.native = native
	userLoaded.Store(dir, sc)
	return info, nil
}

// readUserScript returns a script's source, "" for an optional file that is absent, or an
// error naming file (and the line of a syntax error).
func readUserScript(path, file string, required bool) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if !required {
			return "", nil
		}
		return "", fmt.Errorf("%s: missing; a lua: lock needs acquire.lua and release.lua (renew.lua optional)", file)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %v", file, err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxUserScript+1))
	if err != nil {
		return "", fmt.Errorf("%s: %v", file, err)
	}
	if len(src) > maxUserScript {
		return "", fmt.Errorf("%s: larger than %d KiB; a lock script is a few dozen lines", file, maxUserScript>>10)
	}
	chunk, err := parse.Parse(bytes.NewReader(src), file)
	if err == nil {
		_, err = lua.Compile(chunk, file)
	}
	var pe *parse.Error
	var ce *lua.CompileError
	switch {
	case errors.As(err, &pe) && pe.Pos.Line == parse.EOF:
		return "", fmt.Errorf("%s: %s at the end of the file", file, pe.Message)
	case errors.As(err, &pe):
		return "", fmt.Errorf("%s line %d: %s near '%s'", file, pe.Pos.Line, pe.Message, pe.Token)
	case errors.As(err, &ce):
		return "", fmt.Errorf("%s line %d: %s", file, ce.Line, ce.Message)
	case err != nil:
		return "", fmt.Errorf("%s: %s", file, strings.TrimSpace(err.Error()))
	case len(chunk) == 0:
		return "", fmt.Errorf("%s: no statement; it must return a number (docs/lua.md)", file)
	}
	return string(src), nil
}

// userInfo is a user lock's catalog entry and its own wait. What lockbench knows: the lock
// has a ttl (KeyTTL: the contract passes it, and a key left without one counts as stuck)
// and renews when renew.lua exists. What the scripts' author declares in acquire.lua's
// leading comment lines: the first is the Summary; "safe-unlock: yes" and "weakness: ..."
// lines set those fields, and a "wait: POLICY" line (spin[:INTERVAL], backoff[:MIN..MAX],
// pubsub: --wait's forms) is how the lock's callers wait between attempts, its wait under
// --wait native; without it, lockbench's default backoff. The declarations other than the
// wait change no behaviour: the oracle judges the lock either way.
func userInfo(dir, acquireSrc string, renews bool) (Info, Wait, error) {
	files := "acquire.lua, release.lua"
	if renews {
		files += ", renew.lua"
	}
	i := Info{
		Summary:   "a Lua lock of your own: " + files + " in " + dir,
		AutoRenew: renews,
		KeyTTL:    true,
		Source:    "Lua scripts in " + dir,
		Weakness:  "not declared (a '-- weakness:' line in acquire.lua says it): run it under faults and read the verdict",
	}
	var native Wait
	for n, line := range strings.Split(acquireSrc, "\n") {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "--")
		if !ok {
			break // the leading comment block ends
		}
		text = strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(text, "wait:"):
			decl := strings.TrimSpace(strings.TrimPrefix(text, "wait:"))
			w, err := ParseWait(decl)
			if err != nil || w.Kind == WaitNative {
				return Info{}, Wait{}, fmt.Errorf("acquire.lua line %d: '-- wait: %s' is no wait; valid: spin[:INTERVAL] (spin:0s retries at once), backoff[:MIN..MAX], pubsub", n+1, decl)
			}
			native = w
			i.NativeWait = waitShort(w) + ": declared by acquire.lua ('-- wait: " + decl + "')"
		case strings.HasPrefix(text, "safe-unlock:"):
			i.SafeUnlock = strings.TrimSpace(strings.TrimPrefix(text, "safe-unlock:")) == "yes"
		case strings.HasPrefix(text, "weakness:"):
			i.Weakness = strings.TrimSpace(strings.TrimPrefix(text, "weakness:"))
		case n == 0 && text != "":
			i.Summary = text
		}
	}
	if i.NativeWait == "" {
		i.NativeWait = waitShort(Wait{Kind: WaitBackoff}) + ": lockbench's default; acquire.lua declares no '-- wait:' line"
	}
	return i, native, nil
}

// waitShort is a wait as the catalog's WAIT column reads it.
func waitShort(w Wait) string {
	w = w.withDefaults()
	switch w.Kind {
	case WaitSpin:
		if w.Interval == 0 {
			return "retry at once"
		}
		return "every " + w.Interval.String()
	case WaitBackoff:
		return "backoff " + w.Min.String() + ".." + w.Max.String()
	}
	return "lockbench pubsub"
}

func newUserLua(info Info, o *resolved) (Strategy, error) {
	v, ok := userLoaded.Load(strings.TrimPrefix(info.Name, "lua:"))
	if !ok {
		return nil, fmt.Errorf("the scripts of %s were not loaded", info.Name) // a defect: lookup loads first
	}
	sc := v.(*userScripts)
	b, err := newBaseWaiting(info, o, o.Client, sc.native)
	if err != nil {
		return nil, err
	}
	return &userLua{base: b, c: o.Client, sc: sc}, nil
}

// Acquire runs acquire.lua until it grants: 1 granted; 0 held by another; -N held by
// another whose lease runs N ms more (what a pubsub waiter may sleep at most).
func (s *userLua) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		tok := newToken(owner)
		n, err := s.run(ctx, s.sc.acquire, "acquire.lua", key, tok, s.o.ttlArg)
		switch {
		case err != nil:
			return nil, 0, err
		case n == 1:
			return s.newLease(s, key, key, owner, tok, 0), 0, nil
		case n <= 0:
			return nil, time.Duration(-n) * time.Millisecond, nil
		}
		return nil, 0, s.contract("acquire.lua", n, "1 (granted), 0 or -PTTL (held by another)")
	})
}

// release runs release.lua: 1 released, 0 not the owner. With the pubsub wait policy the
// release is then announced (a second round trip, as for reentrant-hash: the lock's storage
// is the scripts' own, so turn.lua cannot release it in the same script).
func (s *userLua) release(ctx context.Context, l *lease) error {
	n, err := s.run(ctx, s.sc.release, "release.lua", l.key, l.token)
	switch {
	case err != nil:
		return err
	case n == 0:
		return ErrNotOwner
	case n != 1:
		return s.contract("release.lua", n, "1 (released), 0 (not the owner)")
	case s.notify != nil:
		ch := s.channel(l.name)
		r, err := turnScript.ExecInt64(ctx, s.c, []string{waitList(l.name)}, s.turnArgs(ch, s.notify.hasWaiters(ch)))
		if err != nil {
			return err
		}
		return s.turned(l.name, r)
	}
	return nil
}

// renew runs renew.lua for the watchdog: 1 renewed, 0 not the owner.
func (s *userLua) renew(ctx context.Context, l *lease) (bool, error) {
	if s.sc.renew == nil {
		return false, errNoRenew // AutoRenew is false: no watchdog calls this
	}
	n, err := s.run(ctx, s.sc.renew, "renew.lua", l.key, l.token, s.o.ttlArg)
	if err != nil {
		return false, err
	}
	if n != 0 && n != 1 {
		return false, s.contract("renew.lua", n, "1 (renewed), 0 (not the owner)")
	}
	return n == 1, nil
}

// run executes one of the scripts on key with args and reads its integer answer. An error
// reply (the script failed in Redis) is wrapped with the file's name; an answer that is not
// an integer breaks the contract.
func (s *userLua) run(ctx context.Context, sc *luaScript, file, key string, args ...string) (int64, error) {
	r := sc.Exec(ctx, s.c, []string{key}, args)
	if err := r.Error(); err != nil {
		if rueidis.IsRedisNil(err) {
			return 0, s.contract(file, "nil (false or no return)", "a number")
		}
		if isReply(err) {
			return 0, fmt.Errorf("%s: %w", file, err)
		}
		return 0, err
	}
	m, _ := r.ToMessage()
	n, err := m.AsInt64()
	if err != nil {
		return 0, s.contract(file, m.String(), "a number")
	}
	return n, nil
}

// contract is the error of a script whose answer the contract does not know.
func (s *userLua) contract(file string, got any, valid string) error {
	return fmt.Errorf("%s returned %v; valid: %s (docs/lua.md)", file, got, valid)
}
