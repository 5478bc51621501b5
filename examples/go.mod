module github.com/schedkit/schedkit/examples

go 1.26.0

require github.com/schedkit/schedkit v0.0.0

replace github.com/schedkit/schedkit => ../
