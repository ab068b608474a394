print("conformance-server")
