package database

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goodReportFile = "example.com/role=standby\nexample.com/timeline=2\nexample.com/lsn=0/5000100\nexample.com/receiving=true\nexample.com/epoch=3\nexample.com/reported-at=2026-11-30T04:59:57Z\n"

func TestParseInstanceReport(t *testing.T) {
	want := PodReport{
		Labels:      map[string]string{roleLabel: roleStandby},
		Annotations: map[string]string{timelineAnnotation: "2", lsnAnnotation: "0/5000100", receivingAnnotation: "true", epochAnnotation: "3", reportedAnnotation: "2026-11-30T04:59:57Z"},
	}
	for _, tc := range []struct {
		name, reason, file string
		wantErr            string // "" for a report equal to want
	}{
		{"Good", "the file scripts/instance.sh writes", goodReportFile, ""},
		{"CRLFAndBlankLines", "line ends and blank lines do not matter", strings.ReplaceAll(goodReportFile, "\n", "\r\n") + "\r\n\n", ""},
		{"NoTrailingNewline", "the last line needs no newline", strings.TrimSuffix(goodReportFile, "\n"), ""},
		{"Empty", "a file being written for the first time", "", "key example.com/role is missing"},
		{"MissingKey", "every key must be there", strings.Replace(goodReportFile, "example.com/lsn=0/5000100\n", "", 1), "key example.com/lsn is missing"},
		{"Duplicate", "a key twice is not a report", goodReportFile + "example.com/role=primary\n", "example.com/role is given twice"},
		{"Unknown", "nothing but the hook's keys goes on the pod", goodReportFile + "app.kubernetes.io/name=x\n", "app.kubernetes.io/name is not one the hook reads"},
		{"NoEquals", "a line without = is not a key", goodReportFile + "garbage\n", `line "garbage" has no '='`},
		{"BadRole", "the role must be one the hook knows", strings.Replace(goodReportFile, "=standby", "=leader", 1), "key example.com/role has a value"},
		{"BadTimeline", "timelines start at 1", strings.Replace(goodReportFile, "timeline=2", "timeline=0", 1), "key example.com/timeline has a value"},
		{"BadLSN", "an LSN is two hexadecimal halves", strings.Replace(goodReportFile, "0/5000100", "5000100", 1), "key example.com/lsn has a value"},
		{"BadEpoch", "an epoch is a whole number", strings.Replace(goodReportFile, "epoch=3", "epoch=-1", 1), "key example.com/epoch has a value"},
		{"HugeEpoch", "an epoch is at most 2^53", strings.Replace(goodReportFile, "epoch=3", "epoch=9007199254740993", 1), "key example.com/epoch has a value"},
		{"BadTime", "the time is RFC 3339", strings.Replace(goodReportFile, "2026-11-30T04:59:57Z", "yesterday", 1), "key example.com/reported-at has a value"},
		{"LongLine", "an error quotes at most 40 bytes of a line", strings.Repeat("x", 100), strings.Repeat("x", 40) + "...\" has no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseInstanceReport([]byte(tc.file))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("%s\nParseInstanceReport: %v", tc.reason, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s\nParseInstanceReport (-want +got):\n%s", tc.reason, diff)
				}
				if r, err := readReport(got.Labels, got.Annotations); err != nil || r.lsn != 0x5000100 || !r.receiving {
					t.Errorf("%s\nthe hook reads the published report as %+v (%v)", tc.reason, r, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s\nParseInstanceReport: error %v, want one containing %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}

func TestPodReportSameState(t *testing.T) {
	base, err := ParseInstanceReport([]byte(goodReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reason, from, to string
		same, equal            bool
	}{
		{"Unchanged", "the same file", "", "", true, true},
		{"Position", "WAL position alone is no change of state", "0/5000100", "0/6000000", true, false},
		{"Time", "the time written alone is no change of state", "04:59:57Z", "05:00:07Z", true, false},
		{"Receiving", "a standby that stops streaming is what a failover waits for", "receiving=true", "receiving=false", false, false},
		{"Role", "a promotion or a clean shutdown", "=standby", "=primary", false, false},
		{"Timeline", "a new timeline", "timeline=2", "timeline=3", false, false},
		{"Epoch", "a standby that has acted on a fence is what a failover waits for", "epoch=3", "epoch=4", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other, err := ParseInstanceReport([]byte(strings.Replace(goodReportFile, tc.from, tc.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if got := base.SameState(other); got != tc.same {
				t.Errorf("%s\nSameState = %v, want %v", tc.reason, got, tc.same)
			}
			if got := base.Equal(other); got != tc.equal {
				t.Errorf("%s\nEqual = %v, want %v", tc.reason, got, tc.equal)
			}
		})
	}
}
