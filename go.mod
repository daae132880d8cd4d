module xce

go 1.26
