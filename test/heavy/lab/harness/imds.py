#!/usr/bin/env python3
"""The lab's instance metadata service: what EC2 answers at 169.254.169.254, for the lab's VMs.

IMDSv2 only (a PUT for a token, then GETs that carry it), with what the bootstrap scripts read: instance-id,
placement/region and availability-zone, instance tags (tags/instance/, which EC2 serves when the launch template
enables instance metadata tags), what an Auto Scaling group plans for the instance (autoscaling/target-lifecycle-state,
when the entry has a "target-lifecycle-state"), and, when a VM's entry names an "iam-role", that role's temporary credentials
(the entry's "credentials", or fixed keys; iam/security-credentials/, where the AWS CLI and SDKs look for an
instance profile's keys). Each VM is told apart by its source address. The answers come from a JSON file
the harness rewrites (re-read on every request, so a replaced instance gets a new id at once):
  {"10.77.0.31": {"instance-id": "i-...", "region": "us-east-1", "availability-zone": "us-east-1a",
                  "tags": {"cdk-efs-cache:node": "1"}, "iam-role": "NodeRole"}}
Every request is appended to a log file as one JSON line (time, source, method, path, status), for assertions.

Usage: imds.py BIND_ADDRESS CONFIG_JSON REQUEST_LOG
"""
import json
import secrets
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIND, CONFIG, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
TOKENS = {}  # token -> (source address, expiry)


def config_for(source):
    try:
        with open(CONFIG, encoding='utf-8') as f:
            return json.load(f).get(source)
    except (OSError, ValueError):
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, status, body=''):
        data = body.encode('utf-8')
        self.send_response(status)
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        with open(LOG, 'a', encoding='utf-8') as f:
            f.write(json.dumps({'t': time.time(), 'source': self.client_address[0], 'method': self.command,
                                'path': self.path, 'status': status}) + '\n')

    def do_PUT(self):
        if self.path != '/latest/api/token':
            return self.reply(404)
        try:
            ttl = int(self.headers.get('X-aws-ec2-metadata-token-ttl-seconds', ''))
        except ValueError:
            return self.reply(400)
        if not 1 <= ttl <= 21600:
            return self.reply(400)
        token = secrets.token_urlsafe(24)
        TOKENS[token] = (self.client_address[0], time.time() + ttl)
        return self.reply(200, token)

    def do_GET(self):
        held = TOKENS.get(self.headers.get('X-aws-ec2-metadata-token', ''))
        if not held or held[0] != self.client_address[0] or held[1] < time.time():
            return self.reply(401)  # IMDSv2 required, as the library's launch templates set it
        me = config_for(self.client_address[0])
        if me is None:
            return self.reply(404)
        tags = me.get('tags', {})
        answers = {
            '/latest/meta-data/instance-id': me.get('instance-id'),
            '/latest/meta-data/placement/region': me.get('region'),
            '/latest/meta-data/placement/availability-zone': me.get('availability-zone'),
            '/latest/meta-data/tags/instance': '\n'.join(sorted(tags)) if tags else None,
            '/latest/meta-data/autoscaling/target-lifecycle-state': me.get('target-lifecycle-state'),
        }
        for key, value in tags.items():
            answers['/latest/meta-data/tags/instance/' + key] = value
        role = me.get('iam-role')
        if role:
            # The entry's "credentials" (a role session an emulator made and checks), or keys that only an emulator
            # that checks no signature accepts; they expire like an instance profile's, in hours.
            keys = me.get('credentials') or {'AccessKeyId': 'ASIALABINSTANCEROLE1', 'SecretAccessKey': 'lab-secret-key',
                                             'Token': 'lab-session-token'}
            expires = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() + 6 * 3600))
            answers['/latest/meta-data/iam/security-credentials/'] = role
            answers['/latest/meta-data/iam/security-credentials/' + role] = json.dumps({
                'Code': 'Success', 'Type': 'AWS-HMAC', 'AccessKeyId': keys['AccessKeyId'],
                'SecretAccessKey': keys['SecretAccessKey'], 'Token': keys['Token'], 'Expiration': expires,
                'LastUpdated': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())})
        value = answers.get(self.path)
        return self.reply(200, value) if value is not None else self.reply(404)


class Server(ThreadingHTTPServer):
    request_queue_size = 64  # every VM of a lab may ask at once (socketserver's default backlog is 5)


Server((BIND, 80), Handler).serve_forever()
