print("touchsync")
