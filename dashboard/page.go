package dashboard

import (
	"bytes"
	"encoding/json"
	"html"

	"github.com/trellis-fl/trellis/report"
)

// labelsScript is the script that gives the page the report's label table
// (report.Metrics): every metric's label with its unit, by name, final
// metrics ("final_" + name) included, so that the page, the plots and
// results.md call a metric the same.
func labelsScript() []byte {
	labels := map[string]string{}
	for _, m := range report.Metrics() {
		labels[m.Name] = m.Text()
		labels["final_"+m.Name] = report.Label("final_" + m.Name)
	}
	b, _ := json.Marshal(labels) // a map of strings always encodes
	return append(append([]byte("<script>window.TRELLIS_LABELS = "), b...), ";</script>\n"...)
}

// pageHTML fills the page template: its title, and for a self-contained
// file the stylesheet, the script and the events inline.
func pageHTML(tmpl []byte, title string, inline bool, events [][]byte) []byte {
	if title == "" {
		title = "trellis"
	}
	b := bytes.ReplaceAll(tmpl, []byte("{{TITLE}}"), []byte(html.EscapeString(title)))
	if !inline {
		return bytes.Replace(b, []byte(`<script src="model.js"></script>`), append(labelsScript(), `<script src="model.js"></script>`...), 1)
	}
	css, _ := assets.ReadFile("assets/app.css")
	model, _ := assets.ReadFile("assets/model.js")
	js, _ := assets.ReadFile("assets/app.js")
	b = bytes.Replace(b, []byte(`<link rel="stylesheet" href="app.css">`), append(append([]byte("<style>\n"), css...), "</style>"...), 1)
	var data bytes.Buffer
	data.Write(labelsScript())
	data.WriteString("<script>window.TRELLIS_EVENTS = ")
	// encoding/json escapes <, > and & in strings, so no event closes the
	// script element.
	data.Write(joinEvents(events))
	data.WriteString(";</script>\n")
	for _, code := range [][]byte{model, js} {
		data.WriteString("<script>\n")
		data.Write(bytes.ReplaceAll(code, []byte("</script"), []byte(`<\/script`)))
		data.WriteString("</script>\n")
	}
	b = bytes.Replace(b, []byte("<script src=\"model.js\"></script>\n"), nil, 1)
	return bytes.Replace(b, []byte(`<script src="app.js"></script>`), bytes.TrimSuffix(data.Bytes(), []byte("\n")), 1)
}
