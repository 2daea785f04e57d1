package convert

import (
	"encoding/json"
	"fmt"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Credentials wraps a credentials map for the wire; nil for an empty map.
func Credentials(m map[string]string) *pluginv1.Credentials {
	if len(m) == 0 {
		return nil
	}
	return &pluginv1.Credentials{Values: m}
}

// CredentialsFrom unwraps credentials from the wire.
func CredentialsFrom(c *pluginv1.Credentials) map[string]string {
	return c.GetValues()
}

// DescribeToProto converts a Describe answer for the wire.
func DescribeToProto(d *protocol.DescribeResponse) *pluginv1.DescribeResponse {
	return &pluginv1.DescribeResponse{
		Name:            d.Name,
		Kind:            string(d.Kind),
		PluginVersion:   d.Version,
		ProtocolVersion: uint32(d.ProtocolVersion),
		Capabilities:    d.Capabilities,
		Description:     d.Description,
	}
}

// DescribeFromProto converts a Describe answer from the wire.
func DescribeFromProto(d *pluginv1.DescribeResponse) *protocol.DescribeResponse {
	return &protocol.DescribeResponse{
		Name:            d.GetName(),
		Kind:            protocol.Kind(d.GetKind()),
		Version:         d.GetPluginVersion(),
		ProtocolVersion: int(d.GetProtocolVersion()),
		Capabilities:    d.GetCapabilities(),
		Description:     d.GetDescription(),
	}
}

// ConfigureToProto encodes settings as JSON for the wire.
func ConfigureToProto(req *protocol.ConfigureRequest) (*pluginv1.ConfigureRequest, error) {
	settings := req.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return nil, protocol.BadRequest("settings are not JSON-shaped: %v", err)
	}
	return &pluginv1.ConfigureRequest{SettingsJson: raw}, nil
}

// ConfigureFromProto decodes settings from the wire.
func ConfigureFromProto(req *pluginv1.ConfigureRequest) (*protocol.ConfigureRequest, error) {
	settings := map[string]any{}
	if raw := req.GetSettingsJson(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &settings); err != nil {
			return nil, protocol.BadRequest("settings are not a JSON object: %v", err)
		}
	}
	return &protocol.ConfigureRequest{Settings: settings}, nil
}

// ValidateDescribe checks what an implementation's Describe returned before the
// serve helper completes it.
func ValidateDescribe(d *protocol.DescribeResponse) error {
	if d == nil {
		return fmt.Errorf("describe returned nothing")
	}
	if d.Name == "" || d.Version == "" {
		return fmt.Errorf("describe must return a name and a version")
	}
	return nil
}
