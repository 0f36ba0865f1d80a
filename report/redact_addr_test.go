package report

import "testing"

// TestRedactAddressesNotVersions: addresses, serials and short user names
// are hidden; versions, PCI bus IDs and times that look like them are not.
func TestRedactAddressesNotVersions(t *testing.T) {
	r := newRedactor(Identity{User: "ab", Hostname: "gpu-node-7.corp.example"})
	r.addUser("cd", "<other user>")
	cases := []struct{ in, want string }{
		{"inet 10.20.30.40/24 brd 10.20.30.255", "inet <ip>/24 brd <ip>"},
		{"http://192.168.1.7:8888/tree", "http://<ip>:8888/tree"},
		{"listening on 127.0.0.1 and 0.0.0.0", "listening on 127.0.0.1 and 0.0.0.0"},
		{"fe80::1ff:fe23:4567:890a and 2001:db8:0:0:0:0:2:1", "<ip> and <ip>"},
		{"link/ether 00:1b:21:3a:4f:5e", "link/ether <mac>"},
		{"    Serial Number                         : 1324021234567", "    Serial Number                         : <serial>"},
		{"GPU-91faaf4a-9cbf…", "GPU-<redacted>…"},
		{"PID 4242 (cd, 96.7 GiB, python) and user ab", "PID 4242 (<other user>, 96.7 GiB, python) and user <user>"},
		{"ab@gpu-node-7:~$ ls ~ab", "<user>@<host>:~$ ls ~<user>"},
		// Not addresses.
		{"cuDNN 8.9.7.29, nvidia-cudnn-cu12==9.1.0.70", ""},
		{"kernel 5.15.153.1-microsoft-standard-WSL2", ""},
		{"TensorRT version 10.3.0.26", ""},
		{"PCI 00000000:01:00.0 and 0000:3b:00.0 at 12:34:56", ""},
		{"a driver is a cd of ab", ""}, // short names only where they name a user
		{"std::string ab::cd", ""},
	}
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := r.str("detail", c.in); got != want {
			t.Errorf("%q\n got %q\nwant %q", c.in, got, want)
		}
	}
}
