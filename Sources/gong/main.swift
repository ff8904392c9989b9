print("gong")
