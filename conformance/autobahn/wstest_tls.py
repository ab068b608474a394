# -*- coding: utf-8 -*-
# Python 2.7 (wstest's interpreter, see setup.sh): runs wstest with certificate verification for
# wss:// URLs, for conformance/autobahn/run.sh --tls.
#
# wstest 0.8.2's fuzzing client calls autobahn's connectWS(factory) without a TLS context, and
# connectWS then falls back to twisted.internet.ssl.ClientContextFactory(), which verifies nothing
# (and wstest has no option to pass a CA). This wrapper gives that call Twisted's verifying client
# options instead: optionsForClientTLS(host, trustRoot=<the CA in AUTOBAHN_CA>), which checks the
# chain against that CA only and the URL's host name against the certificate (service_identity,
# installed by setup.sh), so a server certificate from another CA or for another name fails the
# connection. Everything else is wstest unchanged.
#
# Usage: AUTOBAHN_CA=ca.pem python2.7 wstest_tls.py -m fuzzingclient -s spec.json
import os
import sys

from twisted.internet import ssl

import autobahntestsuite.fuzzing as fuzzing
from autobahn.twisted import websocket
from autobahntestsuite.wstest import run

with open(os.environ["AUTOBAHN_CA"], "rb") as f:
    TRUST_ROOT = ssl.Certificate.loadPEM(f.read())

_connect = websocket.connectWS


def connect_verifying(factory, contextFactory=None, *args, **kwargs):
    if factory.isSecure and contextFactory is None:
        host = factory.host
        if isinstance(host, bytes):
            host = host.decode("ascii")
        contextFactory = ssl.optionsForClientTLS(host, trustRoot=TRUST_ROOT)
    return _connect(factory, contextFactory, *args, **kwargs)


# fuzzing.py imported the name: replace it where it is called.
fuzzing.connectWS = connect_verifying
websocket.connectWS = connect_verifying

if __name__ == "__main__":
    sys.argv[0] = "wstest"
    sys.exit(run())
