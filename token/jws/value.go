package jws

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file reads whole JSON values as trees and is the one
// canonicalizer: for JSON that is judged or compared as a tree
// (authorization_details, receipt claims). It is the same lexer as the
// object reader in json.go (strings, escapes, numbers, literals, member
// names compared after unescaping), so a text is strict or not the same
// way whether a token's claims or a tree is read from it.

// Errors of DecodeValue beside *DuplicateError.
var (
	// ErrInvalidUTF8: the text is not valid UTF-8, or a string escapes a
	// lone UTF-16 surrogate (which no UTF-8 text can hold).
	ErrInvalidUTF8 = errors.New("jws: JSON is not valid UTF-8")
	// ErrTrailingData: something follows the JSON value.
	ErrTrailingData = errors.New("jws: data after the JSON value")
	// ErrTooDeep: nesting deeper than the caller's bound.
	ErrTooDeep = errors.New("jws: JSON nested too deeply")
	// ErrSyntax: the text is not JSON (RFC 8259).
	ErrSyntax = errors.New("jws: JSON syntax error")
)

// DuplicateError is an object that names one member twice.
type DuplicateError struct {
	// Name is the member given twice.
	Name string
}

// Error names the member.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("jws: JSON member %q given twice", e.Name)
}

// DecodeValue decodes one JSON value strictly, refusing invalid UTF-8 (and
// lone surrogate escapes), an object member given twice (at any depth,
// compared after unescaping), nesting deeper than maxDepth and trailing
// data. Objects are map[string]any, arrays []any, numbers stay
// json.Number (as written).
func DecodeValue(raw []byte, maxDepth int) (any, error) {
	if !utf8.Valid(raw) {
		return nil, ErrInvalidUTF8
	}
	o := Object{b: raw}
	v, err := o.tree(0, maxDepth)
	if err != nil {
		return nil, err
	}
	o.ws()
	if o.i != len(raw) {
		return nil, ErrTrailingData
	}
	return v, nil
}

// tree reads the value at the current position; depth is the number of
// containers around it.
func (o *Object) tree(depth, maxDepth int) (any, error) {
	o.ws()
	if o.i >= len(o.b) {
		return nil, ErrSyntax
	}
	start := o.i
	switch c := o.b[o.i]; {
	case c == '"':
		return o.treeString()
	case c == '-' || (c >= '0' && c <= '9'):
		if !o.readNumber() {
			return nil, ErrSyntax
		}
		return json.Number(o.b[start:o.i]), nil
	case c == 't' && o.literal("true"):
		return true, nil
	case c == 'f' && o.literal("false"):
		return false, nil
	case c == 'n' && o.literal("null"):
		return nil, nil
	case c == '[' || c == '{':
		if depth >= maxDepth {
			return nil, ErrTooDeep
		}
		o.i++
		if c == '[' {
			return o.treeArray(depth, maxDepth)
		}
		return o.treeObject(depth, maxDepth)
	}
	return nil, ErrSyntax
}

func (o *Object) treeString() (string, error) {
	raw, esc, ok := o.readString()
	if !ok {
		return "", ErrSyntax
	}
	if !esc {
		return string(raw), nil
	}
	u, ok := unescape(raw)
	if !ok {
		return "", ErrInvalidUTF8
	}
	return string(u), nil
}

func (o *Object) treeArray(depth, maxDepth int) (any, error) {
	arr := []any{}
	o.ws()
	if o.i < len(o.b) && o.b[o.i] == ']' {
		o.i++
		return arr, nil
	}
	for {
		v, err := o.tree(depth+1, maxDepth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		switch done, err := o.separator(']'); {
		case err != nil:
			return nil, err
		case done:
			return arr, nil
		}
	}
}

func (o *Object) treeObject(depth, maxDepth int) (any, error) {
	obj := map[string]any{}
	o.ws()
	if o.i < len(o.b) && o.b[o.i] == '}' {
		o.i++
		return obj, nil
	}
	for {
		o.ws()
		if o.i >= len(o.b) || o.b[o.i] != '"' {
			return nil, ErrSyntax
		}
		k, err := o.treeString()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[k]; dup {
			return nil, &DuplicateError{Name: k}
		}
		o.ws()
		if o.i >= len(o.b) || o.b[o.i] != ':' {
			return nil, ErrSyntax
		}
		o.i++
		v, err := o.tree(depth+1, maxDepth)
		if err != nil {
			return nil, err
		}
		obj[k] = v
		switch done, err := o.separator('}'); {
		case err != nil:
			return nil, err
		case done:
			return obj, nil
		}
	}
}

// separator reads the "," between two elements (done false) or the closer
// (done true).
func (o *Object) separator(closer byte) (done bool, err error) {
	o.ws()
	switch {
	case o.i >= len(o.b):
		return false, ErrSyntax
	case o.b[o.i] == ',':
		o.i++
		return false, nil
	case o.b[o.i] == closer:
		o.i++
		return true, nil
	}
	return false, ErrSyntax
}

// Canonical is the canonical JSON of one JSON value read by DecodeValue:
// object members sorted by name, no insignificant whitespace, numbers as
// written.
func Canonical(raw []byte, maxDepth int) ([]byte, error) {
	doc, err := DecodeValue(raw, maxDepth)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
