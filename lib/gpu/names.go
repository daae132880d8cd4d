package gpu

import "strings"

// ModelName is LSF's spelling of a vendor's model name: spaces removed,
// '/' and '-' turned into '_' ("Tesla C2050 / C2070" -> TeslaC2050_C2070,
// "Tesla V100-SXM2-16GB" -> TeslaV100_SXM2_16GB).
func ModelName(vendor string) string {
	var b strings.Builder
	for _, c := range strings.TrimSpace(vendor) {
		switch c {
		case ' ', '\t':
		case '/', '-':
			b.WriteRune('_')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// ModelNames are the gmodel spellings that select a device of this vendor
// model name, lower case: the full LSF name, and LSF's "brand" and
// "type" short names read from the words of the vendor name: every run
// of consecutive words ("Tesla", "V100_SXM2_16GB", "TeslaV100_SXM2_16GB"),
// and each word's first '-' part with the words before it ("V100",
// "TeslaV100"). So "NVIDIA H100 80GB HBM3" answers to H100, NVIDIAH100
// and NVIDIAH10080GBHBM3, but not H10 or A100.
func ModelNames(vendor string) []string {
	words := strings.Fields(strings.ReplaceAll(vendor, "/", " "))
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.ToLower(ModelName(s))
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(vendor)
	for i := range words {
		for j := i + 1; j <= len(words); j++ {
			add(strings.Join(words[i:j], ""))
		}
		if head, _, ok := strings.Cut(words[i], "-"); ok {
			add(head)
			for k := range i {
				add(strings.Join(words[k:i], "") + head)
			}
		}
	}
	return out
}

// ModelMatches reports whether gmodel's name selects a device of this
// vendor model name (case is ignored).
func ModelMatches(vendor, want string) bool {
	w := strings.ToLower(want)
	for _, n := range ModelNames(vendor) {
		if n == w {
			return true
		}
	}
	return false
}
