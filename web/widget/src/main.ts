// The Palaver chat widget: one script tag on a host page (see docs/widget.md).
export {};
