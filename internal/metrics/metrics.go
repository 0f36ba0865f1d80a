// Package metrics turns doctor's results into Prometheus metrics with the
// Prometheus Go client library: constant gauges gathered in a private
// registry (no Go or process collectors) and written in the text
// exposition format that node_exporter's textfile collector reads. Names,
// escaping and the exposition's structure come from the library, so a GPU
// named with tabs, quotes, newlines or invalid UTF-8 still yields a file
// that Prometheus parses.
package metrics

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// MaxLabelRunes bounds a label value taken from the machine (a GPU name in
// a hostile snapshot could be megabytes long).
const MaxLabelRunes = 256

// LabelValue makes a value from the machine safe as a label value: valid
// UTF-8 (each invalid byte becomes U+FFFD) and at most MaxLabelRunes runes.
// The text encoder escapes backslashes, quotes and newlines itself.
func LabelValue(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) > MaxLabelRunes {
		r := []rune(s)
		s = string(r[:MaxLabelRunes-1]) + "…"
	}
	return s
}

// Set is a prometheus.Collector of constant gauges, one series per label
// set: a second series with the same labels is folded into the first
// (added with Count, ignored with Gauge), so an odd or hostile input never
// makes the registry refuse the whole exposition.
type Set struct {
	index  map[string]int
	series []series
}

type series struct {
	desc   *prometheus.Desc
	labels []string
	value  float64
}

// Gauge adds a series; a second one with the same labels is ignored.
func (s *Set) Gauge(desc *prometheus.Desc, v float64, labels ...string) {
	s.add(desc, false, v, labels)
}

// Count adds a series; a second one with the same labels adds its value.
func (s *Set) Count(desc *prometheus.Desc, v float64, labels ...string) { s.add(desc, true, v, labels) }

func (s *Set) add(desc *prometheus.Desc, sum bool, v float64, labels []string) {
	clean := make([]string, len(labels))
	for i, l := range labels {
		clean[i] = LabelValue(l)
	}
	key := desc.String() + "\x00" + strings.Join(clean, "\x00")
	if s.index == nil {
		s.index = map[string]int{}
	}
	if i, ok := s.index[key]; ok {
		if sum {
			s.series[i].value += v
		}
		return
	}
	s.index[key] = len(s.series)
	s.series = append(s.series, series{desc, clean, v})
}

// Collect implements prometheus.Collector.
func (s *Set) Collect(ch chan<- prometheus.Metric) {
	for _, x := range s.series {
		m, err := prometheus.NewConstMetric(x.desc, prometheus.GaugeValue, x.value, x.labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(x.desc, err)
		}
		ch <- m
	}
}

// Describe implements prometheus.Collector.
func (s *Set) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(s, ch) }

// Write gathers the collectors in a private, pedantic registry and writes
// them in the text exposition format (version 0.0.4), families sorted by
// name.
func Write(w io.Writer, cs ...prometheus.Collector) error {
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
