module github.com/lectern-research/lectern/sdk

go 1.26
