module github.com/lectern-research/lectern/scripts/pdfcompare

go 1.26.8

require (
	github.com/klippa-app/go-pdfium v1.20.0
	github.com/ledongthuc/pdf v0.0.0-20260907135840-6c8c28e0e8a0
	github.com/tetratelabs/wazero v1.12.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/jolestar/go-commons-pool/v2 v2.1.2 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
