package database

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLSN(t *testing.T) {
	for text, want := range map[string]uint64{"0/0": 0, "0/5000100": 0x5000100, "16/B374D848": 0x16B374D848, "FFFFFFFF/FFFFFFFF": ^uint64(0)} {
		got, ok := parseLSN(text)
		if !ok || got != want {
			t.Errorf("parseLSN(%q) = %x, %v; want %x", text, got, ok, want)
		}
		if back := formatLSN(got); back != text {
			t.Errorf("formatLSN(%x) = %q, want %q", got, back, text)
		}
	}
	for _, bad := range []string{"", "5000100", "0/", "/1", "G/1", "1/2/3", "100000000/0", "-1/0"} {
		if _, ok := parseLSN(bad); ok {
			t.Errorf("parseLSN(%q) must fail", bad)
		}
	}
}

func TestParseReport(t *testing.T) {
	at := "2026-11-30T04:59:57Z"
	good := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{roleLabel: roleStandby},
			Annotations: map[string]string{timelineAnnotation: "2", lsnAnnotation: "0/5000100", receivingAnnotation: "true", reportedAnnotation: at},
		}}
	}
	r := parseReport(good())
	want := report{role: roleStandby, timeline: 2, lsn: 0x5000100, receiving: true, at: time.Date(2026, 11, 30, 4, 59, 57, 0, time.UTC)}
	if r == nil || *r != want {
		t.Fatalf("parseReport = %+v, want %+v", r, want)
	}
	breaks := map[string]func(*corev1.Pod){
		"NoRole":      func(p *corev1.Pod) { delete(p.Labels, roleLabel) },
		"OtherRole":   func(p *corev1.Pod) { p.Labels[roleLabel] = "leader" },
		"Timeline0":   func(p *corev1.Pod) { p.Annotations[timelineAnnotation] = "0" },
		"TimelineHex": func(p *corev1.Pod) { p.Annotations[timelineAnnotation] = "0x2" },
		"BadLSN":      func(p *corev1.Pod) { p.Annotations[lsnAnnotation] = "5000100" },
		"NoTime":      func(p *corev1.Pod) { delete(p.Annotations, reportedAnnotation) },
	}
	for name, brk := range breaks {
		t.Run(name, func(t *testing.T) {
			p := good()
			brk(p)
			if r := parseReport(p); r != nil {
				t.Errorf("a malformed report must count as none, got %+v", r)
			}
		})
	}
}

func TestReportAfter(t *testing.T) {
	a := &report{timeline: 1, lsn: 0x5000100}
	cases := []struct {
		r    *report
		want bool
	}{
		{&report{timeline: 1, lsn: 0x5000101}, true},
		{&report{timeline: 1, lsn: 0x5000100}, false},
		{&report{timeline: 2, lsn: 0x1}, true},
		{&report{timeline: 0, lsn: 0x9000000}, false},
	}
	for _, tc := range cases {
		if got := tc.r.after(a); got != tc.want {
			t.Errorf("%+v.after(%+v) = %v, want %v", tc.r, a, got, tc.want)
		}
	}
}
