"""What the Python benchmark scripts share: a fresh user with one empty room on a running server."""
import uuid

import requests


def register(base, prefix):
    """Registers a user named `prefix_<random>` and creates a room; returns (token, room id)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    r = requests.post(base + "/api/auth/register", json={"username": name, "password": "password-123", "firstName": prefix})
    r.raise_for_status()
    token = r.json()["data"]["token"]
    r = requests.post(base + "/api/rooms", json={}, headers={"Authorization": "Bearer " + token})
    r.raise_for_status()
    return token, r.json()["data"]["id"]
