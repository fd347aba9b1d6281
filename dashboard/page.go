package dashboard

import (
	"bytes"
	"html"
)

// pageHTML fills the page template: its title, and for a self-contained
// file the stylesheet, the script and the events inline.
func pageHTML(tmpl []byte, title string, inline bool, events [][]byte) []byte {
	if title == "" {
		title = "trellis"
	}
	b := bytes.ReplaceAll(tmpl, []byte("{{TITLE}}"), []byte(html.EscapeString(title)))
	if !inline {
		return b
	}
	css, _ := assets.ReadFile("assets/app.css")
	js, _ := assets.ReadFile("assets/app.js")
	b = bytes.Replace(b, []byte(`<link rel="stylesheet" href="app.css">`), append(append([]byte("<style>\n"), css...), "</style>"...), 1)
	var data bytes.Buffer
	data.WriteString("<script>window.TRELLIS_EVENTS = ")
	// encoding/json escapes <, > and & in strings, so no event closes the
	// script element.
	data.Write(joinEvents(events))
	data.WriteString(";</script>\n<script>\n")
	data.Write(bytes.ReplaceAll(js, []byte("</script"), []byte(`<\/script`)))
	data.WriteString("</script>")
	return bytes.Replace(b, []byte(`<script src="app.js"></script>`), data.Bytes(), 1)
}
