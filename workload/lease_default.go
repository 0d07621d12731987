package workload

// The ttl setting remembers whether anyone chose the ttl (the command line, a profile, a
// phase, a sweep) or it is the default, so that a strategy that has a default lease of its own
// can use it: the Redisson family runs as Redisson's lock(), a 30s lease renewed every 10s
// (strategies.Options.DefaultLease, strategies.LeaseReporter).

func init() {
	for i := range Settings {
		if Settings[i].Name == "ttl" {
			Settings[i] = markDefaultTTL(Settings[i])
		}
	}
}

// markDefaultTTL wraps the ttl setting: filling the default marks it, setting a value clears
// the mark, and a phase takes the run's.
func markDefaultTTL(s Setting) Setting {
	fill, field, copyTo, phase, set := s.fill, s.field, s.copy, s.phase, s.set
	s.fill = func(c *Config) {
		if c.TTL == 0 {
			c.ttlDefault = true
		}
		fill(c)
	}
	s.field = func(c *Config) Value { return chosenTTL{field(c), c} }
	s.copy = func(dst *Phase, c *Config) {
		copyTo(dst, c)
		dst.ttlDefault = c.ttlDefault
	}
	s.phase = func(p *Phase) error {
		if p.TTL == 0 {
			p.ttlDefault = true
		}
		return phase(p)
	}
	s.set = func(p *Phase, v string) error {
		if err := set(p, v); err != nil {
			return err
		}
		p.ttlDefault = false
		return nil
	}
	return s
}

// chosenTTL is the ttl flag: a value set through it is chosen.
type chosenTTL struct {
	Value
	c *Config
}

func (v chosenTTL) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		return err
	}
	v.c.ttlDefault = false
	return nil
}
