package strategies

import "testing"

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering token twice did not panic")
		}
	}()
	info, _ := Lookup("token")
	register(info, newTokenStrategy)
}
