package lsfimport

// What the importer takes from LSF resource connector's parameters: the
// LSB_RC_* keys of lsf.conf (and of lsb.params, where some sites put
// them), applied to the templates hostproviders.go writes, and the
// queues' RC_HOSTS and RC_ACCOUNT.

import (
	"fmt"
	"strconv"
	"strings"

	"xce/lib/config"
)

// rcState is what the importer gathers for the resource connector before
// hostProviders.json is read.
type rcState struct {
	params map[string]Param // the LSB_RC_* keys and their kin, by key; the last wins
	order  []string         // their keys as first seen
	// serverDir is LSF_SERVERDIR (else LSF_BINDIR) of lsf.conf: its
	// grandparent, LSF_TOP/VERSION, is what relative scriptPaths start from.
	serverDir string
}

// rcReasons are why the resource connector keys that are not translated
// are not.
var rcReasons = map[string]string{
	"LSB_RC_UPDATE_INTERVAL":             "xce computes demand in every scheduling cycle",
	"LSB_RC_QUERY_INTERVAL":              "the provisioner polls the providers at its own pace",
	"LSB_RC_REQUEUE_BUFFER":              "xce.toml has no requeue buffer for reclaimed hosts",
	"LSB_RC_EXTERNAL_HOST_ABNORMAL_TIME": "xce returns an instance that does not join within the template's boot_timeout; a host lost after joining is unavail as any other",
	"LSB_RC_TEMPLATE_REQUEST_DELAY":      "the provisioner backs off a template after a failed request by itself",
	"LSB_RC_MQTT_ERROR_LIMIT":            "xce needs no message broker for bhosts -rc",
	"LSF_MQ_BROKER_HOSTS":                "xce needs no message broker for bhosts -rc",
	"EBROKERD_HOST_CLEAN_DELAY":          "xce forgets a returned instance once its provider confirms the return",
}

// rcConf takes the resource connector's keys of lsf.conf and lsb.params
// (and LSF_SERVERDIR, which locates the provider scripts); it reports
// whether p was one.
func (im *importer) rcConf(p Param) bool {
	k := strings.ToUpper(p.Key)
	switch {
	case k == "LSF_SERVERDIR" || k == "LSF_BINDIR" && im.rc.serverDir == "":
		im.rc.serverDir = strings.Trim(p.Value, `"' `)
		return false // not the resource connector's own: no note either way
	case strings.HasPrefix(k, "LSB_RC_"), strings.HasPrefix(k, "EBROKERD_"), k == "LSF_MQ_BROKER_HOSTS":
	default:
		return false
	}
	if im.rc.params == nil {
		im.rc.params = map[string]Param{}
	}
	if _, seen := im.rc.params[k]; !seen {
		im.rc.order = append(im.rc.order, k)
	}
	p.Value = strings.Trim(p.Value, `"' `)
	im.rc.params[k] = p
	return true
}

// rcSettings are the parameters that apply to every imported template.
type rcSettings struct {
	idle, idleComment string // idle_time (TOML) and its comment
	ttl, ttlComment   string // max_ttl, "" for none
	maxPer            int64  // LSB_RC_MAX_INSTANCES_PER_TEMPLATE
	maxPerComment     string
	flags             []string // LSB_RC_EXTERNAL_HOST_FLAG: Boolean resources every template's hosts carry
	flagSrc           src
	defaultType       string // LSB_RC_DEFAULT_HOST_TYPE
	typeSrc           src
}

// LSF's defaults of the parameters the templates take.
const (
	lsfRCIdleMinutes    = 60
	lsfRCMaxPerTemplate = 50
)

// rcSettings translates the parameters the templates take and notes
// every other resource connector key; found says whether a
// hostProviders.json was read (without one there is nothing to apply
// them to).
func (im *importer) rcSettings(found bool) rcSettings {
	st := rcSettings{
		idle: config.TOMLString(config.Duration(lsfRCIdleMinutes * 60).String()), idleComment: "LSF's default (LSB_RC_EXTERNAL_HOST_IDLE_TIME not set)",
		maxPer: lsfRCMaxPerTemplate, maxPerComment: "LSF's default LSB_RC_MAX_INSTANCES_PER_TEMPLATE",
	}
	for _, k := range im.rc.order {
		p := im.rc.params[k]
		at := psrc(p)
		if !found {
			im.note(at, "not translated: no resource connector template was imported to take it")
			continue
		}
		switch k {
		case "LSB_RC_EXTERNAL_HOST_IDLE_TIME":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n <= 0 || n > 1<<31 {
				im.note(at, "not translated: %q is not a positive number of minutes; LSF's default, %d minutes, is used", p.Value, lsfRCIdleMinutes)
				continue
			}
			st.idle, st.idleComment = config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("LSB_RC_EXTERNAL_HOST_IDLE_TIME %d min", n)
		case "LSB_RC_EXTERNAL_HOST_MAX_TTL":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n < 0 || n > 1<<31 {
				im.note(at, "not translated: %q is not a number of minutes", p.Value)
				continue
			}
			if n > 0 { // 0: no limit, xce's default too
				st.ttl, st.ttlComment = config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("LSB_RC_EXTERNAL_HOST_MAX_TTL %d min", n)
			}
		case "LSB_RC_MAX_INSTANCES_PER_TEMPLATE":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n <= 0 || n > maxInt32 {
				im.note(at, "not translated: %q is not a number from 1 to %d; LSF's default, %d, is used", p.Value, maxInt32, lsfRCMaxPerTemplate)
				continue
			}
			st.maxPer, st.maxPerComment = n, "LSB_RC_MAX_INSTANCES_PER_TEMPLATE"
		case "LSB_RC_EXTERNAL_HOST_FLAG":
			st.flagSrc = at
			for _, f := range strings.Fields(p.Value) {
				if r := im.res[f]; r == nil || r.kind != "boolean" {
					im.note(at, "%s not translated: not a Boolean resource of lsf.shared", f)
					continue
				}
				st.flags = append(st.flags, f)
			}
		case "LSB_RC_DEFAULT_HOST_TYPE":
			st.defaultType, st.typeSrc = p.Value, at
		default:
			im.notTranslated(p, rcReasons)
		}
	}
	return st
}

// rcQueue translates a queue's RC_HOSTS and RC_ACCOUNT (and notes
// RC_DEMAND_POLICY).
func (im *importer) rcQueue(t *table, p Param) {
	at := psrc(p)
	switch strings.ToUpper(p.Key) {
	case "RC_HOSTS":
		var out []string
		for _, w := range List(p.Value) {
			switch {
			case strings.EqualFold(w, "none"):
			case strings.EqualFold(w, "all"):
				out = append(out, "all")
			default:
				out = append(out, w)
			}
		}
		t.set("rc_hosts", tomlList(out), "", at)
	case "RC_ACCOUNT":
		t.set("rc_account", config.TOMLString(strings.Trim(p.Value, `"' `)), "", at)
	default:
		im.note(at, "not translated: xce provisions for every pending job that only a template can take; it has no demand threshold")
	}
}
