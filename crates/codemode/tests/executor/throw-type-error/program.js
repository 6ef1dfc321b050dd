null.x
