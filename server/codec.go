package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// strictJSON is the Connect JSON codec with one change from connect-go's
// default: a request naming a field the message does not have is refused
// (InvalidArgument naming the field) instead of silently dropped. A typo
// such as {"brand": "acme"} for brand_id must not become a request with
// the field unset. Frontends are generated from the same .proto; a newer
// frontend against an older pactd must upgrade pactd first.
type strictJSON struct{ name string }

// strictJSONCodecs replace both names connect-go serves JSON under.
func strictJSONCodecs() []connect.HandlerOption {
	return []connect.HandlerOption{
		connect.WithCodec(strictJSON{name: "json"}),
		connect.WithCodec(strictJSON{name: "json; charset=utf-8"}),
	}
}

var _ connect.Codec = strictJSON{}

// unknownField finds the field name in protojson's unknown-field error.
var unknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// Name implements connect.Codec.
func (c strictJSON) Name() string { return c.name }

// IsBinary reports false: the codec is text.
func (c strictJSON) IsBinary() bool { return false }

// Marshal implements connect.Codec as connect-go's JSON codec does.
func (c strictJSON) Marshal(message any) ([]byte, error) {
	m, ok := message.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a proto.Message", message)
	}
	return protojson.MarshalOptions{}.Marshal(m)
}

// MarshalStable implements connect's stable codec (used for GET requests'
// cache keys): compact JSON.
func (c strictJSON) MarshalStable(message any) ([]byte, error) {
	b, err := c.Marshal(message)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Unmarshal implements connect.Codec, refusing unknown fields. connect-go
// wraps the error as InvalidArgument ("unmarshal message: ...").
func (c strictJSON) Unmarshal(data []byte, message any) error {
	m, ok := message.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a proto.Message", message)
	}
	if len(data) == 0 {
		return errors.New("zero-length payload is not a valid JSON object")
	}
	err := protojson.UnmarshalOptions{}.Unmarshal(data, m)
	if err == nil {
		return nil
	}
	if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
		return fmt.Errorf("unknown field %q in %s: JSON members must be %s fields, named as in the .proto or in lowerCamelCase",
			f[1], m.ProtoReflect().Descriptor().FullName(), m.ProtoReflect().Descriptor().Name())
	}
	return fmt.Errorf("invalid %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
}
