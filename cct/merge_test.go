package cct

import "testing"

type sample struct {
	frames []fr
	tid    uint32
	m      Metrics
}

var setA = []sample{
	{names("main;a;b"), 1, ms(1, 10)},
	{names("main;a;b"), 2, ms(2, 20)},
	{names("main;c"), 1, ms(1, 7)},
	{[]fr{{name: "main", addr: 0x10, line: 3}, {name: "g", addr: 0x44, line: 9}, {name: "inl", addr: 0x44, line: 2, inl: true}}, 3, ms(4, 40)},
}

var setB = []sample{
	{names("main;d"), 4, ms(5, 50)}, // new function, interned first in B
	{names("main;a;b"), 1, ms(1, 10)},
	{[]fr{{name: "main", addr: 0x20, line: 5}, {name: "g", addr: 0x44, line: 9}, {name: "inl", addr: 0x44, line: 2, inl: true}}, 3, ms(1, 10)},
	{names("main;c"), 9, ms(1, 1)},
}

func build(sets ...[]sample) *Tree {
	tr := New()
	for _, set := range sets {
		for _, s := range set {
			tr.Add(stackOf(tr, s.frames...), s.tid, s.m)
		}
	}
	return tr
}

func TestMergeEqualsAddingBoth(t *testing.T) {
	a, b := build(setA), build(setB)
	bBefore := dump(b)
	a.Merge(b)
	want := build(setA, setB)
	if got := dump(a); got != dump(want) {
		t.Errorf("merged:\n%s\nwant:\n%s", got, dump(want))
	}
	if a.Total() != want.Total() {
		t.Errorf("merged total %v, want %v", a.Total(), want.Total())
	}
	if dump(b) != bBefore {
		t.Error("Merge changed its argument")
	}
	checkInvariants(t, a)
}

func TestMergeIntoEmptyAndSelf(t *testing.T) {
	e := New()
	e.Merge(build(setA))
	if dump(e) != dump(build(setA)) {
		t.Error("merge into an empty tree differs from the source")
	}
	e.Merge(e)
	if dump(e) != dump(build(setA, setA)) {
		t.Error("merging a tree into itself does not double it")
	}
	checkInvariants(t, e)
}
