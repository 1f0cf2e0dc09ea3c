package sessionproof

func crashChild() int { return 3 }
