package driver

// Windows cannot spawn a driver (proc.Start says so), so no process ever gets here.

func (p *process) kill() {
	p.in.Close()
	_ = p.cmd.Process.Kill()
}

func (p *process) stop() {}
func (p *process) cont() {}
