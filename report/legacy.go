package report

import "encoding/json"

// SchemaVersion is the version of the JSON result and comparison documents (schema/*.json)
// this lockbench writes, in every document's schema_version. It rises when a field is
// renamed or removed, or changes meaning; adding a field does not raise it.
//
//   - 1: the first versioned schema. Every field name carries its unit: acquire_rate became
//     acquire_rate_per_s, offered_rate offered_rate_per_s, config.rate rate_per_s,
//     capacity max_rate max_rate_per_s, steps' offered, achieved and timeout_rate
//     offered_per_s, achieved_per_s and timeout_ratio. Per-second histograms (intervals)
//     joined the results.
//   - 0 (no schema_version): files written before; still read, see below.
const SchemaVersion = 1

// Reading older files. `report compare` and `report merge` take result files written by an
// earlier release (a CI baseline), so the names schema version 1 renamed are still accepted
// when reading, for one release: each UnmarshalJSON below takes the old name when the new
// one is absent. Nothing writes them.

// UnmarshalJSON reads a Config, accepting rate (schema version 0) for rate_per_s.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	v := struct {
		*plain
		Rate *float64 `json:"rate"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	legacy(&c.Rate, v.Rate)
	return nil
}

// UnmarshalJSON reads a Result, accepting acquire_rate and offered_rate (schema version 0)
// for acquire_rate_per_s and offered_rate_per_s.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	v := struct {
		*plain
		AcquireRate *float64 `json:"acquire_rate"`
		OfferedRate *float64 `json:"offered_rate"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	legacy(&r.AcquireRate, v.AcquireRate)
	legacy(&r.OfferedRate, v.OfferedRate)
	return nil
}

// UnmarshalJSON reads a Capacity, accepting max_rate (schema version 0) for max_rate_per_s.
func (c *Capacity) UnmarshalJSON(b []byte) error {
	type plain Capacity
	v := struct {
		*plain
		MaxRate *float64 `json:"max_rate"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	legacy(&c.MaxRate, v.MaxRate)
	return nil
}

// UnmarshalJSON reads a CapacityStep, accepting offered, achieved and timeout_rate (schema
// version 0) for offered_per_s, achieved_per_s and timeout_ratio.
func (st *CapacityStep) UnmarshalJSON(b []byte) error {
	type plain CapacityStep
	v := struct {
		*plain
		Offered     *float64 `json:"offered"`
		Achieved    *float64 `json:"achieved"`
		TimeoutRate *float64 `json:"timeout_rate"`
	}{plain: (*plain)(st)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	legacy(&st.Offered, v.Offered)
	legacy(&st.Achieved, v.Achieved)
	legacy(&st.TimeoutRate, v.TimeoutRate)
	return nil
}

// legacy sets *field to the old name's value when the file had the old name and not the
// new one (the field is still zero).
func legacy(field *float64, old *float64) {
	if old != nil && *field == 0 {
		*field = *old
	}
}
