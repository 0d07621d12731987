package faults

import "testing"

func TestPlanParsesOnceAndAnswers(t *testing.T) {
	p, err := NewPlan([][]string{
		{"holder-pause:p=0.1,d=1s", "latency:node=0,ms=5"},
		nil,
		{"failover:at=1s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !p.NeedsProxy() || p.Count(Failover) != 1 || p.Count(Kill) != 0 || len(p.Phase(1)) != 0 || p.Phase(0)[1].MS == 0 {
		t.Errorf("plan: proxy %v, failovers %d, kills %d, phase 1 %v, phase 0 %+v",
			p.NeedsProxy(), p.Count(Failover), p.Count(Kill), p.Phase(1), p.Phase(0))
	}
	specs, err := p.Specs([]string{"failover:at=1s", "crash-between:p=0.5"})
	if err != nil || len(specs) != 2 || specs[0].Kind != Failover || specs[1].P != 0.5 {
		t.Errorf("Specs: %+v, %v", specs, err)
	}
	if _, err := NewPlan([][]string{{"meteor:p=1"}}); err == nil {
		t.Error("a malformed spec made a plan")
	}
}
