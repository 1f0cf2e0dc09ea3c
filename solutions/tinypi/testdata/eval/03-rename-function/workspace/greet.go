package main

func greet(name string) string {
	return "hi " + name
}
