"""IAM authorization for the AWS API emulator (server.py): moto's own enforcement turned on, with its policy decision
replaced by one that evaluates the Resource and Condition elements of the caller's policies for the calls the
instance scripts make.

What moto 5.2 does when INITIAL_NO_AUTH_ACTION_COUNT is reached (moto/core/authorization.py, moto/iam/access_control.py),
and is kept here:
  - it finds the caller from the request's access key: an IAM user's key, or an assumed-role session of STS, whose
    X-Amz-Security-Token must be that session's (unknown key or token: AuthFailure / InvalidClientTokenId);
  - it recomputes the SigV4 signature with that key's secret (SignatureDoesNotMatch);
  - it collects the caller's policies from its IAM: a user's inline, attached and group policies, a role's inline and
    attached managed policies (customer managed ones as created; AWS managed ones only when moto loads them).
What moto decides, and why it is replaced (check_action_permitted below):
  - its resource is "*" for every EC2 and CloudWatch call (only S3, IAM, STS and SQS pass an ARN), so a statement
    scoped to ARNs never applies to them: the library's AttachNetworkInterface statements (the interfaces' ARNs,
    instance/*) would deny the attach whatever they name; SignalResource never reaches moto (the front answers it);
  - it does not evaluate conditions of identity policies: it passes request values only for a role's trust policy,
    implements StringEquals only and lets every other operator hold, so a conditioned Allow (the fleet tag on the
    instance, the s3:prefix of ListBucket, cloudwatch:namespace) allows as if it had no condition;
  - its action is "<SigV4 service>:<Action>", so cloudwatch:PutMetricData is looked for as monitoring:PutMetricData;
  - it matches actions case-sensitively (IAM does not), and patterns as regular expressions ("." matches any
    character).
What is decided here instead, for the calls the scripts make (REQUEST_CONTEXT), as IAM's identity-based evaluation
does: every resource the action authorizes must be allowed by a statement whose Action, Resource and Condition all
match, and no matching Deny. AttachNetworkInterface authorizes the interface AND the instance, with each one's tags
(from moto's EC2) as aws:ResourceTag/*; SignalResource the stack's ARN (STACK_IDS, made by server.py per registered
stack); CompleteLifecycleAction the group's ARN with its tags (from moto's Auto Scaling) as aws:ResourceTag/* and
autoscaling:ResourceTag/*; S3 the ARN moto passes, ListBucket with s3:prefix from the request; PutMetricData cloudwatch:namespace. Other
calls are evaluated against the resource moto passes ("*" for most) with aws:RequestedRegion only.
What is NOT evaluated: resource-based policies (bucket policies, KMS key policies), permission boundaries, session
policies, SCPs, the role's trust policy (the set-up user assumes the role; on EC2 the service does), condition keys
other than those above (a statement that uses another key is not matched: it does not allow), condition operators
other than the String*, Arn* and Bool families and Null (used: raises, the call answers 500), and whether AWS would
check more resources or keys than the Service Authorization Reference lists for these actions.
"""
import json
import re
import threading
from urllib.parse import parse_qs, urlparse

from moto import settings
from moto.core.exceptions import _RESTError
from moto.autoscaling.models import autoscaling_backends
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.iam import access_control
from moto.iam.models import iam_backends

ACCOUNT = DEFAULT_ACCOUNT_ID
ADMIN_USER = 'emulator-admin'
STACK_IDS = {}  # stack name -> its ARN with id (server.py sets it for each registered stack)
LOCK = threading.Lock()


def _list(value):
    return value if isinstance(value, list) else [value]


def _first(value):
    return value[0] if isinstance(value, list) else value


def _glob(pattern, value, ignore_case=False):
    """IAM's wildcard match: * any run of characters, ? one character."""
    rx = ''.join('.*' if c == '*' else '.' if c == '?' else re.escape(c) for c in str(pattern))
    return re.fullmatch(rx, value, re.IGNORECASE if ignore_case else 0) is not None


# Condition operators: (does one wanted value match the request's value, negated operator).
_OPERATORS = {
    'StringEquals': (lambda want, have: have == want, False),
    'StringNotEquals': (lambda want, have: have == want, True),
    'StringEqualsIgnoreCase': (lambda want, have: have.lower() == want.lower(), False),
    'StringNotEqualsIgnoreCase': (lambda want, have: have.lower() == want.lower(), True),
    'StringLike': (_glob, False),
    'StringNotLike': (_glob, True),
    'ArnEquals': (lambda want, have: have == want, False),
    'ArnNotEquals': (lambda want, have: have == want, True),
    'ArnLike': (_glob, False),
    'ArnNotLike': (_glob, True),
    'Bool': (lambda want, have: have.lower() == want.lower(), False),
}


def _condition_holds(operator, key, wanted, context):
    if_exists = operator.endswith('IfExists')
    base = operator[:-len('IfExists')] if if_exists else operator
    have = context.get(key.lower())
    if base == 'Null':
        return (have is None) == (str(wanted[0]).lower() == 'true')
    if base not in _OPERATORS:
        raise NotImplementedError(f'the emulator does not evaluate the condition operator {operator}')
    match, negated = _OPERATORS[base]
    if have is None:
        return if_exists or negated
    hit = any(match(str(w), have) for w in wanted)
    return not hit if negated else hit


def _statement_applies(statement, action, resource, context):
    if 'Action' in statement:
        if not any(_glob(p, action, True) for p in _list(statement['Action'])):
            return False
    elif any(_glob(p, action, True) for p in _list(statement.get('NotAction', []))):
        return False
    if 'Resource' in statement:
        if not any(_glob(p, resource) for p in _list(statement['Resource'])):
            return False
    elif 'NotResource' in statement and any(_glob(p, resource) for p in _list(statement['NotResource'])):
        return False
    return all(_condition_holds(op, key, _list(wanted), context)
               for op, keys in statement.get('Condition', {}).items() for key, wanted in keys.items())


def allowed(documents, action, resource, context):
    """Identity-based evaluation: an explicit Deny wins, otherwise some Allow must apply."""
    permitted = False
    for document in documents:
        for statement in _list(document.get('Statement', [])):
            if _statement_applies(statement, action, resource, context):
                if statement.get('Effect') == 'Deny':
                    return False
                permitted = True
    return permitted


def _tags(resource_id):
    tags = ec2_backends[ACCOUNT]['us-east-1'].tags.get(resource_id, {})
    return {f'aws:resourcetag/{k}'.lower(): v for k, v in tags.items()}


def _attach_network_interface(region, data, _resource, _path):
    eni, iid = _first(data.get('NetworkInterfaceId', '')), _first(data.get('InstanceId', ''))
    return [(f'arn:aws:ec2:{region}:{ACCOUNT}:network-interface/{eni}', _tags(eni)),
            (f'arn:aws:ec2:{region}:{ACCOUNT}:instance/{iid}', _tags(iid))]


def _signal_resource(region, data, _resource, _path):
    name = _first(data.get('StackName', ''))
    with LOCK:
        arn = name if name.startswith('arn:') else STACK_IDS.get(name, f'arn:aws:cloudformation:{region}:{ACCOUNT}:stack/{name}/unknown')
    return [(arn, {})]


def _list_bucket(_region, _data, resource, path):
    prefix = parse_qs(urlparse(path).query).get('prefix')
    return [(resource, {'s3:prefix': prefix[0]} if prefix else {})]


def _complete_lifecycle_action(region, data, _resource, _path):
    name = _first(data.get('AutoScalingGroupName', ''))
    group = autoscaling_backends[ACCOUNT][region].autoscaling_groups.get(name)
    tags = {t['Key'] if 'Key' in t else t.get('key'): t.get('Value', t.get('value')) for t in (group.tags if group else [])}
    keys = {f'{prefix}:resourcetag/{k}'.lower(): v for k, v in tags.items() for prefix in ('aws', 'autoscaling')}
    arn = group.arn if group else f'arn:aws:autoscaling:{region}:{ACCOUNT}:autoScalingGroup:unknown:autoScalingGroupName/{name}'
    return [(arn, keys)]


def _put_metric_data(_region, data, resource, _path):
    return [(resource, {'cloudwatch:namespace': _first(data.get('Namespace', ''))})]


# action -> (region, request data, moto's resource, path) -> [(resource ARN, condition keys)], each to be allowed.
REQUEST_CONTEXT = {
    'ec2:AttachNetworkInterface': _attach_network_interface,
    'cloudformation:SignalResource': _signal_resource,
    's3:ListBucket': _list_bucket,
    'cloudwatch:PutMetricData': _put_metric_data,
    'autoscaling:CompleteLifecycleAction': _complete_lifecycle_action,
}
# SigV4 service names that are not the IAM prefix of their actions.
IAM_PREFIX = {'monitoring': 'cloudwatch'}


class UnauthorizedOperation(_RESTError):
    """EC2's answer to a call the caller's policies do not allow (EC2's error document, not IAM's)."""
    code = 403

    def __init__(self, message):
        super().__init__('UnauthorizedOperation', message)
        self.description = ('<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>UnauthorizedOperation'
                            f'</Code><Message>{message}</Message></Error></Errors><RequestID>emulator</RequestID></Response>')


def check_action_permitted(self, resource):
    """Replaces moto's IAMRequestBase.check_action_permitted (see the module's docstring)."""
    service, _, name = self._action.partition(':')
    action = f'{IAM_PREFIX.get(service, service)}:{name}'
    if action == 'sts:GetCallerIdentity':  # always allowed, as on AWS
        return
    # moto's IAMPolicy reads a collected policy (a managed policy's default version, an inline policy's text).
    documents = [access_control.IAMPolicy(p)._policy_json for p in self._access_key.collect_policies()]  # pylint: disable=protected-access
    context_of = REQUEST_CONTEXT.get(action, lambda *_: [(resource, {})])
    for arn, keys in context_of(self._region, self._data or {}, resource, self._path):
        context = {'aws:requestedregion': self._region, **{k.lower(): v for k, v in keys.items()}}
        if not allowed(documents, action, arn, context):
            if service == 'ec2':
                raise UnauthorizedOperation(f'You are not authorized to perform this operation. User: {self._access_key.arn} '
                                            f'is not authorized to perform: {action} on resource: {arn}')
            self._raise_access_denied()


def install():
    """Creates the emulator's own user (everything allowed: the test's set-up calls), replaces moto's decision, and
    turns enforcement on for every request from now on. Returns that user's access key and secret."""
    iam = iam_backends[ACCOUNT]['aws']
    iam.create_user(region_name='us-east-1', user_name=ADMIN_USER)
    iam.put_user_policy(ADMIN_USER, 'everything', json.dumps(
        {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*', 'Resource': '*'}]}))
    key = iam.create_access_key(ADMIN_USER)
    access_control.IAMRequestBase.check_action_permitted = check_action_permitted
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    return key.access_key_id, key.secret_access_key
