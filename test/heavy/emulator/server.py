#!/usr/bin/env python3
"""An AWS API emulator for the instance scripts' AWS calls: moto (server mode, in this process) behind real TLS on
port 443, with what moto lacks or does more loosely than AWS added in front of it, and the lab's metadata service.

Run inside a network namespace of its own (test/heavy/emulator/emulator.ts makes it), where the AWS host names of the
scripts resolve to 127.0.0.1 through an /etc/hosts bind-mounted into the scripts' mount namespace, and 169.254.169.254
is an address of lo:
  - https://*:443  every AWS API call, authorized against IAM (authz.py: moto's enforcement, with the Resource and
    Condition elements of the caller's policies evaluated for the scripts' calls; the test's set-up calls use the
    emulator's own user, which may do anything). The front records each one (service, action, parameters, client,
    status) and answers itself, once the call is authorized as moto would authorize it, for:
      * CloudFormation SignalResource, which moto does not implement: recorded; refused with a ValidationError, as
        CloudFormation refuses it, when the stack or the resource is not one the test registered (POST /stacks);
      * EC2 AttachNetworkInterface of an interface that is attached already: AWS refuses it with
        InvalidNetworkInterface.InUse ("Interface: [eni-...] in use."), moto would move it; and an instance whose
        device index is taken: InvalidParameterValue;
      * Auto Scaling CompleteLifecycleAction, which moto does not implement: recorded; refused with a ValidationError
        when the group (made through moto) or its hook (put_lifecycle_hook) does not exist;
      * EC2 TerminateInstances: AWS detaches the secondary interfaces of a terminated instance (available again;
        deleted only when DeleteOnTermination), moto leaves them attached to it.
    Everything else goes to moto as it came.
  - http://169.254.169.254:80  the lab's metadata service (test/heavy/lab/harness/imds.py), IMDSv2, with the instance's
    role credentials for the aws CLI: the session of a role in moto's IAM that the test passes to POST /imds.
  - a control API over HTTP on the Unix socket STATE/control.sock, for the test (outside the namespace):
      GET  /calls              every API call recorded so far, in order
      POST /stacks             {"Stack": ["LogicalId", ...]}: the resources that may be signalled; answers each
                               stack's ARN with its id (AWS::StackId)
      POST /imds               {"instance-id": ..., "tags": {...}, "credentials": {"AccessKeyId": ..., "SecretAccessKey":
                               ..., "Token": ...}}: the instance the metadata service describes, and its role's keys
      POST /faults             {"SignalResource": [[400, "Throttling", "Rate exceeded"], ...]}: the next calls of
                               that action are answered with these errors, one each, before anything else
      POST /api                {"service": "ec2", "method": "run_instances", "params": {...}}: a call with boto3
                               through the TLS front (recorded like any other, client Boto3)
      POST /probe              {"socket": PATH}: from then on, each SignalResource and CompleteLifecycleAction that IAM
                               allows waits, before it is answered, for POST / on that Unix socket with {"source",
                               "resource", "status", "hook", "result"}; the
                               JSON answered is recorded with the call as "probe" (the lab checks there, from another
                               VM, whether the signalling node serves at that moment)
Every call is recorded with its source address ("source").
Usage: server.py STATE_DIR IMDS_SCRIPT   (STATE_DIR holds ca.pem, server.pem, server.key from certs.sh; IMDS_SCRIPT '-':
no metadata service, the lab runs its own)
"""
import io
import json
import os
import signal
import socketserver
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

from moto.autoscaling.models import autoscaling_backends
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.iam.access_control import IAMRequest
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.datastructures import EnvironHeaders
from werkzeug.exceptions import HTTPException
from werkzeug.serving import make_server

import authz

STATE, IMDS_SCRIPT = sys.argv[1], sys.argv[2]
ADMIN = ('', '')  # the access key and secret of the emulator's own user (authz.install), for POST /api
CALLS = []
STACKS = {}
FAULTS = {}  # action -> errors still to answer, [status, code, message] each
LOCK = threading.Lock()
IMDS_SOURCES = ('169.254.169.254', '127.0.0.1')
PROBE = {}  # 'socket': the Unix socket of POST /probe


def probe(source, params):
    """What the test's probe answers about the instance that signals (POST /probe), or None when there is none."""
    sock = PROBE.get('socket')
    if not sock:
        return None
    import http.client  # pylint: disable=import-outside-toplevel
    import socket  # pylint: disable=import-outside-toplevel

    class Conn(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(self.timeout)
            self.sock.connect(sock)
    conn = Conn('probe', timeout=120)
    try:
        body = json.dumps({'source': source, 'resource': params.get('LogicalResourceId', ''), 'status': params.get('Status', ''),
                           'hook': params.get('LifecycleHookName', ''), 'result': params.get('LifecycleActionResult', '')})
        conn.request('POST', '/', body, {'Content-Type': 'application/json'})
        return json.loads(conn.getresponse().read() or b'null')
    except (OSError, ValueError) as e:
        return {'error': str(e)}
    finally:
        conn.close()


def service_of(environ):
    """The service a signed request is for: the credential scope of its SigV4 Authorization header."""
    auth = environ.get('HTTP_AUTHORIZATION', '')
    try:
        return auth.split('Credential=')[1].split('/')[3]
    except IndexError:
        return environ.get('HTTP_HOST', '?').split('.')[0]


def query_error(status, code, message, ec2=False):
    rid = str(uuid.uuid4())
    if ec2:
        body = (f'<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>{code}</Code>'
                f'<Message>{message}</Message></Error></Errors><RequestID>{rid}</RequestID></Response>')
    else:
        body = (f'<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type>'
                f'<Code>{code}</Code><Message>{message}</Message></Error><RequestId>{rid}</RequestId></ErrorResponse>')
    return status, body


class Front:
    """WSGI middleware: records every call, answers what moto lacks, forwards the rest to moto's dispatcher."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        length = int(environ.get('CONTENT_LENGTH') or 0)
        if length:
            body = environ['wsgi.input'].read(length)
        else:  # chunked (boto3's PutObject with a trailing checksum): the server decoded it, read to the end
            body = environ['wsgi.input'].read() if environ.get('wsgi.input_terminated') else b''
        environ['wsgi.input'] = io.BytesIO(body)
        service = service_of(environ)
        form = environ.get('CONTENT_TYPE', '').startswith('application/x-www-form-urlencoded')  # the query protocol
        params = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(body.decode('utf-8', 'replace') if form else '').items()}
        if environ.get('QUERY_STRING'):
            params.update({k: v[0] for k, v in parse_qs(environ['QUERY_STRING']).items()})
        action = params.pop('Action', None) or environ.get('HTTP_X_AMZ_TARGET') or \
            f"{environ['REQUEST_METHOD']} {environ.get('PATH_INFO', '/')}"
        params.pop('Version', None)
        record = {'t': time.time(), 'service': service, 'action': action, 'params': params,
                  'host': environ.get('HTTP_HOST', ''), 'client': environ.get('HTTP_USER_AGENT', '').split(' ')[0],
                  'source': environ.get('REMOTE_ADDR', '')}
        answer = self.authorize(environ, body, params, service, action)
        if answer is None and (service, action) in (('cloudformation', 'SignalResource'), ('autoscaling', 'CompleteLifecycleAction')):
            record['probe'] = probe(record['source'], params)
        answer = answer or self.own_answer(service, action, params)
        if answer is not None:
            status, text = answer
            record['status'] = status
            self.keep(record)
            data = text.encode('utf-8')
            start_response(f'{status} {"OK" if status == 200 else "Bad Request"}',
                           [('Content-Type', 'text/xml'), ('Content-Length', str(len(data)))])
            return [data]
        seen = {}

        def recording_start(status, headers, exc_info=None):
            seen['status'] = int(status.split(' ')[0])
            return start_response(status, headers, exc_info)

        out = list(self.app(environ, recording_start))
        record['status'] = seen.get('status')
        if service == 'ec2' and action == 'TerminateInstances' and record['status'] == 200:
            self.detach_on_terminate(params)
        self.keep(record)
        return out

    @staticmethod
    def keep(record):
        with LOCK:
            CALLS.append(record)

    @staticmethod
    def authorize(environ, body, params, service, action):
        """For the calls answered here (moto checks the rest itself): moto's authentication of the caller (key,
        session token, signature) and the policy decision of authz.py, as AWS makes them before anything else. None
        when allowed, else the error to answer."""
        if (service, action) not in (('cloudformation', 'SignalResource'), ('ec2', 'AttachNetworkInterface'),
                                     ('autoscaling', 'CompleteLifecycleAction')):
            return None
        path = environ.get('RAW_URI') or environ.get('PATH_INFO', '/')
        try:
            request = IAMRequest(account_id=DEFAULT_ACCOUNT_ID, method=environ['REQUEST_METHOD'], path=path, data=params,
                                 body=body, headers=EnvironHeaders(environ), action=action)
            request.check_signature()
            request.check_action_permitted('*')
        except HTTPException as e:
            return e.code, e.get_body()
        return None

    def own_answer(self, service, action, params):
        with LOCK:
            fault = FAULTS.get(action, []).pop(0) if FAULTS.get(action) else None
        if fault:
            return query_error(fault[0], fault[1], fault[2], ec2=service == 'ec2')
        if service == 'cloudformation' and action == 'SignalResource':
            return self.signal_resource(params)
        if service == 'ec2' and action == 'AttachNetworkInterface':
            return self.attach_check(params)
        if service == 'autoscaling' and action == 'CompleteLifecycleAction':
            return self.complete_lifecycle_action(params)
        return None

    @staticmethod
    def complete_lifecycle_action(p):
        """Auto Scaling's CompleteLifecycleAction, which moto does not implement: the group and its hook must exist (made
        through moto: create_auto_scaling_group, put_lifecycle_hook), the result be CONTINUE or ABANDON, and the instance
        named; answered and recorded (the test plays what the group does next)."""
        backend = autoscaling_backends[DEFAULT_ACCOUNT_ID]['us-east-1']
        group, hook = p.get('AutoScalingGroupName', ''), p.get('LifecycleHookName', '')
        if group not in backend.autoscaling_groups:
            return query_error(400, 'ValidationError', f'Group {group} not found')
        if f'{group}_{hook}' not in backend.lifecycle_hooks:
            return query_error(400, 'ValidationError', f'No Lifecycle Hook named {hook} found for group {group}')
        if p.get('LifecycleActionResult') not in ('CONTINUE', 'ABANDON') or not (p.get('InstanceId') or p.get('LifecycleActionToken')):
            return query_error(400, 'ValidationError', 'LifecycleActionResult must be CONTINUE or ABANDON, with an InstanceId or a token')
        return 200, ('<CompleteLifecycleActionResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/">'
                     '<CompleteLifecycleActionResult/>'
                     f'<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>'
                     '</CompleteLifecycleActionResponse>')

    @staticmethod
    def signal_resource(p):
        stack, resource = p.get('StackName', ''), p.get('LogicalResourceId', '')
        if stack not in STACKS:
            return query_error(400, 'ValidationError', f'Stack with id {stack} does not exist')
        if resource not in STACKS[stack]:
            return query_error(400, 'ValidationError', f'Resource {resource} does not exist for stack {stack}')
        if p.get('Status') not in ('SUCCESS', 'FAILURE') or not 1 <= len(p.get('UniqueId', '')) <= 64:
            return query_error(400, 'ValidationError', 'Status must be SUCCESS or FAILURE, UniqueId 1-64 characters')
        return 200, ('<SignalResourceResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">'
                     f'<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>'
                     '</SignalResourceResponse>')

    @staticmethod
    def backend(region='us-east-1'):
        return ec2_backends[DEFAULT_ACCOUNT_ID][region]

    def attach_check(self, p):
        b = self.backend()
        try:
            eni = b.get_network_interface(p.get('NetworkInterfaceId', ''))
            instance = b.get_instance(p.get('InstanceId', ''))
        except Exception:  # moto answers unknown ids with its own errors
            return None
        if eni.instance is not None:
            return query_error(400, 'InvalidNetworkInterface.InUse', f'Interface: [{eni.id}] in use.', ec2=True)
        index = int(p.get('DeviceIndex', '-1'))
        if index in instance.nics:
            return query_error(400, 'InvalidParameterValue', f"Instance '{instance.id}' already has an interface "
                               f"attached at device index '{index}'.", ec2=True)
        return None

    def detach_on_terminate(self, p):
        b = self.backend()
        ids = [v for k, v in p.items() if k.startswith('InstanceId.')]
        for iid in ids:
            instance = b.get_instance(iid)
            for index, eni in list(instance.nics.items()):
                if index == 0:
                    continue
                instance.detach_eni(eni)
                if eni.delete_on_termination:
                    b.delete_network_interface(eni.id)


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class Control(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def address_string(self):
        return 'control'

    def reply(self, status, value):
        data = json.dumps(value, default=str).encode('utf-8')
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == '/calls':
            with LOCK:
                return self.reply(200, list(CALLS))
        return self.reply(404, {'error': self.path})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get('Content-Length') or 0)) or b'{}')
        if self.path == '/stacks':
            STACKS.update({k: set(v) for k, v in body.items()})
            with authz.LOCK:
                for name in body:
                    authz.STACK_IDS.setdefault(name, f'arn:aws:cloudformation:us-east-1:{DEFAULT_ACCOUNT_ID}:stack/{name}/{uuid.uuid4()}')
                return self.reply(200, {name: authz.STACK_IDS[name] for name in body})
        if self.path == '/probe':
            PROBE.update(body)
            return self.reply(200, {})
        if self.path == '/faults':
            with LOCK:
                FAULTS.update(body)
            return self.reply(200, {})
        if self.path == '/imds':
            entry = {'region': 'us-east-1', 'availability-zone': 'us-east-1a', 'iam-role': 'NodeRole', **body}
            tmp = os.path.join(STATE, 'imds.json.tmp')
            with open(tmp, 'w', encoding='utf-8') as f:
                json.dump({s: entry for s in IMDS_SOURCES}, f)
            os.replace(tmp, os.path.join(STATE, 'imds.json'))
            return self.reply(200, {})
        if self.path == '/api':
            import boto3  # pylint: disable=import-outside-toplevel
            import botocore.exceptions  # pylint: disable=import-outside-toplevel
            from botocore.config import Config  # pylint: disable=import-outside-toplevel
            client = boto3.client(body['service'], region_name='us-east-1', endpoint_url='https://localhost',
                                  verify=os.path.join(STATE, 'ca.pem'), aws_access_key_id=ADMIN[0],
                                  aws_secret_access_key=ADMIN[1], config=Config(s3={'addressing_style': 'path'}))
            params = body.get('params', {})
            if 'Body' in params:  # S3 PutObject: text in the JSON, bytes to boto3
                params['Body'] = params['Body'].encode('utf-8')
            try:
                result = getattr(client, body['method'])(**params)
            except botocore.exceptions.ClientError as e:
                return self.reply(400, {'error': e.response.get('Error', {})})
            result.pop('ResponseMetadata', None)
            return self.reply(200, result)
        return self.reply(404, {'error': self.path})


def main():
    # Ends with its parent (the test) and on SIGTERM, taking the metadata service along.
    parent = os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    def watch():
        while os.getppid() == parent:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch, daemon=True).start()
    global ADMIN  # pylint: disable=global-statement
    ADMIN = authz.install()
    with open(os.path.join(STATE, 'imds.json'), 'w', encoding='utf-8') as f:
        f.write('{}')
    imds = None if IMDS_SCRIPT == '-' else subprocess.Popen(
        [sys.executable, IMDS_SCRIPT, '169.254.169.254', os.path.join(STATE, 'imds.json'), os.path.join(STATE, 'imds.log')])
    api = make_server('0.0.0.0', 443, Front(DomainDispatcherApplication(create_backend_app)), threaded=True,
                      ssl_context=(os.path.join(STATE, 'server.pem'), os.path.join(STATE, 'server.key')))
    threading.Thread(target=api.serve_forever, daemon=True).start()
    import socket  # pylint: disable=import-outside-toplevel
    for _ in range(100 if imds else 0):  # the metadata service listens too before the control socket appears
        try:
            socket.create_connection(('169.254.169.254', 80), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    sock = os.path.join(STATE, 'control.sock')
    control = UnixHTTPServer(sock + '.tmp', Control)
    os.rename(sock + '.tmp', sock)  # appears when everything listens
    try:
        control.serve_forever()
    finally:
        if imds:
            imds.terminate()


if __name__ == '__main__':
    main()
