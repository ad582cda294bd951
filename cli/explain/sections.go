package explain

// The what-if table and the speedup waterfall come from the what-if
// model (analysis/whatif): they go in Document.WhatIf and
// Document.Waterfall, and are written here, after time to accuracy.
// Until the model is wired in, both say "not estimated".

func (p *printer) sections(d *Document) {
	p.heading("what-if")
	if d.WhatIf == nil {
		p.item("not estimated")
	}
	p.heading("waterfall")
	if d.Waterfall == nil {
		p.item("not estimated")
	}
}
