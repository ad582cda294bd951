package tensor

import "testing"

func TestRowSliceSharesStorage(t *testing.T) {
	x := &Tensor{Rows: 4, Cols: 3, Data: make([]float32, 12)}
	v := x.RowSlice(1, 3)
	if v.Rows != 2 || v.Cols != 3 || !v.View || v.Off != 3 || len(v.Data) != 6 {
		t.Fatalf("view %+v", v)
	}
	v.Data[0] = 5
	if x.Data[3] != 5 || x.Row(1)[0] != 5 {
		t.Fatal("a view must share its parent's storage")
	}
	if x.Bytes() != 48 || v.Len() != 6 || x.Shape() != "4x3" {
		t.Fatalf("bytes %d len %d shape %s", x.Bytes(), v.Len(), x.Shape())
	}
	if w := v.RowSlice(1, 2); w.Off != 6 {
		t.Fatalf("nested view offset %d, want 6", w.Off)
	}
}

func TestRowSliceOutOfRangePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("slicing past the rows must panic (a programming error)")
		}
	}()
	(&Tensor{Rows: 2, Cols: 1, Data: make([]float32, 2)}).RowSlice(1, 3)
}
