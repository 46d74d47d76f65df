package jws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// This file is the strict reader of whole JSON values and the one
// canonicalizer: for JSON that is judged or compared as a tree
// (authorization_details, receipt claims), where the object reader in
// json.go reads only a token's top-level members.

// Errors of DecodeValue beside *DuplicateError and encoding/json's syntax
// errors.
var (
	// ErrInvalidUTF8: the text is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("jws: JSON is not valid UTF-8")
	// ErrTrailingData: something follows the JSON value.
	ErrTrailingData = errors.New("jws: data after the JSON value")
	// ErrTooDeep: nesting deeper than the caller's bound.
	ErrTooDeep = errors.New("jws: JSON nested too deeply")
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

// DecodeValue decodes one JSON value strictly, refusing invalid UTF-8, an
// object member given twice (at any depth), nesting deeper than maxDepth
// and trailing data. Objects are map[string]any, arrays []any, numbers stay
// json.Number.
func DecodeValue(raw []byte, maxDepth int) (any, error) {
	if !utf8.Valid(raw) {
		return nil, ErrInvalidUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrTrailingData
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth, maxDepth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= maxDepth {
		return nil, ErrTooDeep
	}
	switch d {
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token() // ]
		return arr, err
	case '{':
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			if _, dup := obj[k]; dup {
				return nil, &DuplicateError{Name: k}
			}
			v, err := decodeValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
		_, err := dec.Token() // }
		return obj, err
	}
	return nil, errors.New("unexpected delimiter")
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
